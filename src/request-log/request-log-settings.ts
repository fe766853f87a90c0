/** Which bodies the request log keeps (REQUEST_LOG_BODIES). */
export type RequestLogBodies = 'off' | 'errors' | 'all';

export const requestLogBodyModes: readonly RequestLogBodies[] = ['off', 'errors', 'all'];

export interface RequestLogSettings {
  readonly enabled: boolean;
  readonly bodies: RequestLogBodies;
  readonly bodyMaxBytes: number;
  readonly retentionDays: number;
}
