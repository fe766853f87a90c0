import { invalidRequest } from '../errors/gateway-error.ts';

/** What a view shows in place of a secret (MCP headers); sent back in an update, it means "keep the stored one". */
export const redacted = '***';

/** Where a stored secret goes, and the secret itself, as the update finds them. */
export interface StoredSecret {
  /** The stored destination (an MCP server's or webhook's URL); null when there is none. */
  readonly url: string | null;
  /** The stored value; undefined when nothing is stored under that name. */
  readonly value: string | undefined;
}

/**
 * The value an update stores for a secret field (ADR 30): a real value as sent; `***` the
 * stored secret, but only while the destination's origin (scheme, host, port) stays the same.
 * A redacted value with a new origin, or with nothing stored, answers 400 `secret_required`
 * naming the field: an admin-role key must never send a secret it cannot read to a URL it picks.
 */
export function keepRedactedSecret(field: string, value: string, newUrl: string | null, stored: StoredSecret): string {
  if (value !== redacted) return value;
  if (stored.value === undefined) {
    throw secretRequired(field, `${field} is redacted (***) but no value is stored to keep: send the real value`);
  }
  const origin = newUrl === null ? null : originOf(newUrl);
  if (origin === null || stored.url === null || origin !== originOf(stored.url)) {
    throw secretRequired(
      field,
      `${field} is redacted (***) but the destination's origin changed: a stored secret never follows a new destination; send the real value`,
    );
  }
  return stored.value;
}

function secretRequired(field: string, message: string) {
  return invalidRequest(message, { code: 'secret_required', param: field });
}

/** `scheme://host:port` (default ports dropped, host lower-cased); null for a text that is not a URL. */
function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}
