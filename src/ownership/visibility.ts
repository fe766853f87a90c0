import { userPathCovers } from '../core/user-path.ts';
import type { Principal } from '../auth/principal.ts';
import type { OwnedKind, OwnedResource } from './ownership-store.ts';

/** Who asks: the authenticated principal and the request's user path. */
export interface Caller {
  readonly principal: Principal;
  readonly userPath: string;
}

/**
 * Admin-role keys see every tenant's resources; so do the master key (and open mode) unless the
 * request names a user path: then it acts as that tenant, as stored Responses always did.
 */
export function seesAll(caller: Caller): boolean {
  const { principal } = caller;
  if (principal.role === 'admin') return true;
  return (principal.kind === 'master' || principal.kind === 'open') && caller.userPath === '/';
}

/**
 * The visibility rule of everything a tenant creates upstream (the stored Responses' rule):
 * the owner's user path and its ancestors see it, case-insensitively; admin-role keys and the
 * master key without a user path see everything. A resource with no owner (created before
 * ownership was recorded) is visible to those only.
 */
export function mayView(caller: Caller, owner: OwnedResource | null): boolean {
  if (seesAll(caller)) return true;
  return owner !== null && userPathCovers(caller.userPath, owner.userPath);
}

/** The user path a listing is restricted to; null: everything (master and admin keys). */
export function listingScope(caller: Caller): string | null {
  return seesAll(caller) ? null : caller.userPath;
}

/** The key id recorded with what a caller creates: a JWT by its subject (`jwt:<sub>`), as usage records do. */
export function ownerKeyIdOf(principal: Principal): string | null {
  return principal.kind === 'jwt' ? `jwt:${principal.subject ?? ''}` : principal.keyId;
}

/** The ownership record of a resource `caller` just created on `instance`. */
export function ownedBy(caller: Caller, kind: OwnedKind, instance: string, id: string, now = Date.now()): OwnedResource {
  return { kind, id, instance, userPath: caller.userPath, keyId: ownerKeyIdOf(caller.principal), createdAt: now, charged: false };
}
