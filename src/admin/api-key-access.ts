import type { ApiKeyRole } from '../keys/api-key-store.ts';
import { invalidParameter } from './admin-errors.ts';

const maximumEntries = 200;
const maximumEntryLength = 200;
const roles: readonly ApiKeyRole[] = ['user', 'viewer', 'admin'];

/**
 * `allowed_models` / `allowed_endpoints`: absent (undefined: unchanged), null (no restriction),
 * or a list of non-empty strings (an empty list allows nothing). Duplicates are dropped.
 */
export function readAllowList(body: Record<string, unknown>, field: 'allowed_models' | 'allowed_endpoints'): string[] | null | undefined {
  const value = body[field];
  if (value === undefined || value === null) return value;
  const message = `${field} must be null or an array of at most ${maximumEntries} non-empty strings of at most ${maximumEntryLength} characters`;
  if (!Array.isArray(value) || value.length > maximumEntries) throw invalidParameter(field, message);
  const entries = value.map((entry: unknown) => {
    if (typeof entry !== 'string' || entry.trim() === '' || entry.length > maximumEntryLength) throw invalidParameter(field, message);
    return entry.trim();
  });
  return [...new Set(entries)];
}

/** `role`: `user`, `viewer` or `admin`; undefined when absent. */
export function readRole(body: Record<string, unknown>): ApiKeyRole | undefined {
  const value = body['role'];
  if (value === undefined) return undefined;
  const role = roles.find((candidate) => candidate === value);
  if (role === undefined) throw invalidParameter('role', 'role must be one of user, viewer, admin');
  return role;
}

/** `grace_seconds` of a rotation: an integer from 0 (the old secret stops at once) to 30 days; default 0. */
export function readGraceSeconds(body: Record<string, unknown>): number {
  const value = body['grace_seconds'];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 30 * 86_400) {
    throw invalidParameter('grace_seconds', 'grace_seconds must be an integer from 0 to 2592000 (30 days)');
  }
  return value;
}
