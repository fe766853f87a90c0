import type { FastifyInstance } from 'fastify';

/** What reloads the configuration (lifecycle/config-reload.ts's ConfigReloader). */
export interface Reloader {
  reload(): Promise<object>;
}

/**
 * `POST /admin/reload` (master key): hot reload of the configuration file, as SIGHUP does.
 * 200 with what was applied; 400 `invalid_config` naming the key when the file is refused.
 */
export function registerReloadRoute(app: FastifyInstance, reloader: Reloader): void {
  app.post('/admin/reload', async () => reloader.reload());
}
