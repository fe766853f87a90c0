import type { FastifyInstance } from 'fastify';
import type { ConfigReloader } from '../lifecycle/config-reload.ts';

/**
 * `POST /admin/reload` (master key): hot reload of the configuration file, as SIGHUP does.
 * 200 with what was applied; 400 `invalid_config` naming the key when the file is refused.
 */
export function registerReloadRoute(app: FastifyInstance, reloader: ConfigReloader): void {
  app.post('/admin/reload', async () => reloader.reload());
}
