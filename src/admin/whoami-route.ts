import type { FastifyInstance } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { AnswerOf, whoamiSchema } from './schemas/answers.ts';

/** What an admin credential may do: `admin` (everything) or `viewer` (GET only). */
export type AdminRole = 'admin' | 'viewer';

/** The master key and open mode (no MASTER_KEY) may do everything; a managed key by its role. */
export function adminRoleOf(principal: Principal): AdminRole {
  if (principal.kind === 'master' || principal.kind === 'open') return 'admin';
  return principal.role === 'admin' ? 'admin' : 'viewer';
}

/**
 * `GET /admin/whoami` (issue 19): who the presented admin credential is, so that the dashboard
 * shows what the role may do and hides the rest. The admin hook has already refused anything
 * that may not read `/admin`.
 */
export function registerWhoamiRoute(app: FastifyInstance): void {
  app.get('/admin/whoami', async (request): Promise<AnswerOf<typeof whoamiSchema>> => ({
    kind: request.principal.kind,
    role: adminRoleOf(request.principal),
    key_id: request.principal.keyId,
  }));
}
