import { userPathCovers } from '../core/user-path.ts';
import type { Principal } from '../http/auth.ts';
import type { OwnedKind, OwnedResource } from './ownership-store.ts';

/** Who asks: the authenticated principal and the request's user path. */
export interface Caller {
  readonly principal: Principal;
  readonly userPath: string;
}

/** The master key, open mode and admin-role keys see every tenant's resources. */
export function seesAll(principal: Principal): boolean {
  return principal.kind === 'master' || principal.kind === 'open' || principal.role === 'admin';
}

/**
 * The visibility rule of everything a tenant creates upstream (the stored Responses' rule):
 * the owner's user path and its ancestors see it, case-insensitively; the master key and
 * admin-role keys see everything. A resource with no owner (created before ownership was
 * recorded) is visible to those only.
 */
export function mayView(caller: Caller, owner: OwnedResource | null): boolean {
  if (seesAll(caller.principal)) return true;
  return owner !== null && userPathCovers(caller.userPath, owner.userPath);
}

/** The user path a listing is restricted to; null: everything (master and admin keys). */
export function listingScope(caller: Caller): string | null {
  return seesAll(caller.principal) ? null : caller.userPath;
}

/** The key id recorded with what a caller creates: a JWT by its subject (`jwt:<sub>`), as usage records do. */
export function ownerKeyIdOf(principal: Principal): string | null {
  return principal.kind === 'jwt' ? `jwt:${principal.subject ?? ''}` : principal.keyId;
}

/** The ownership record of a resource `caller` just created on `instance`. */
export function ownedBy(caller: Caller, kind: OwnedKind, instance: string, id: string, now = Date.now()): OwnedResource {
  return { kind, id, instance, userPath: caller.userPath, keyId: ownerKeyIdOf(caller.principal), createdAt: now, charged: false };
}
