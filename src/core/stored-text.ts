/**
 * Caps on the free-text fields the gateway stores per request (README "Stored fields"), for
 * the values no earlier check bounds: what an upstream reports (a passthrough answer's
 * `model`), a passthrough path, the client's `User-Agent`. Longer values are truncated where
 * they are stored (request log, usage records); what a client sends in a field it names
 * (`model`, `user`, `metadata`, the user-path header) is refused before it gets this far.
 */
export const storedTextLimits = {
  /** Model names: refused above this in requests (400 `model_name_too_long`). */
  model: 256,
  /** The endpoint (a passthrough's path, query excluded). */
  endpoint: 2048,
  userAgent: 512,
  /** A key id, or `jwt:<sub>`. */
  keyId: 300,
} as const;

/** `value` cut to `limit` characters (a surrogate pair is never split). */
export function capText(value: string, limit: number): string {
  if (value.length <= limit) return value;
  const code = value.charCodeAt(limit - 1);
  return value.slice(0, code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit);
}

export function capNullableText(value: string | null, limit: number): string | null {
  return value === null ? null : capText(value, limit);
}
