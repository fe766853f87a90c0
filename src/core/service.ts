/**
 * One part of the running gateway, as the one list of services (src/services.ts) declares it:
 * main starts the list in its order, shutdown stops it in reverse, hot reload hands each the
 * new settings, and an admin write made through another process asks each to re-read. A new
 * service goes into that list, never by hand into main, shutdown or reload.
 */
export interface Service<Settings = unknown> {
  readonly name: string;
  /** Called in list order once every service is built (one its factory already started declares none). */
  start?(): Promise<void>;
  /**
   * Re-reads what an admin write made through another process (a worker, a replica) may have
   * changed; `route` is that write's admin route.
   */
  reload?(route: string): Promise<void>;
  /**
   * Hot reload, first pass: throws a ConfigError to refuse the new settings before any service
   * applies them. A service whose check is building the new state applies it here.
   */
  checkSettings?(settings: Settings): Promise<void>;
  /** Hot reload, second pass: applies the new settings, in list order. */
  applySettings?(settings: Settings): Promise<void>;
  /** Called in reverse list order at shutdown. */
  stop?(): Promise<void>;
}

export async function startServices(services: readonly Service[]): Promise<void> {
  for (const service of services) await service.start?.();
}

/** Stops every service, last started first; a failure is reported and the next one still stops. */
export async function stopServices(services: readonly Service[], failed: (name: string, error: unknown) => void): Promise<void> {
  for (const service of [...services].reverse()) {
    try {
      await service.stop?.();
    } catch (error) {
      failed(service.name, error);
    }
  }
}

/** Every service re-reads at once after an admin write made elsewhere; returns the failures. */
export async function reloadServices(services: readonly Service[], route: string): Promise<unknown[]> {
  const results = await Promise.allSettled(services.map((service) => service.reload?.(route)));
  return results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
}
