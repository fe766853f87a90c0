/** What replaces the value of a credential-like query parameter. */
export const redactedValue = '[REDACTED]';

// Parameter names that carry credentials: `key`, `token`, `auth`, `sig` and anything that
// contains one of the words below (api_key, x-api-key, access_token, client_secret, ...).
const exactNames = new Set(['key', 'token', 'auth', 'sig', 'code', 'jwt', 'pass', 'pwd']);
const credentialWords = /key|token|secret|passw|auth|credential|signature|session/;

/** Whether a query parameter of this name holds a credential (case, `-`/`_` and %-encoding ignored). */
export function isCredentialParameter(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    // a malformed escape: judge the raw name
  }
  const normalized = decoded.toLowerCase().trim();
  return exactNames.has(normalized) || credentialWords.test(normalized);
}

/**
 * The URL (a request target such as `/v1/chat/completions?api_key=sk-1`, or an absolute URL)
 * with the value of every credential-like query parameter replaced by `[REDACTED]`:
 * `/v1/chat/completions?api_key=[REDACTED]`. Other parameters and the path are kept.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const hash = url.indexOf('#', start);
  const end = hash === -1 ? url.length : hash;
  const query = url
    .slice(start + 1, end)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return equals !== -1 && isCredentialParameter(name) ? `${name}=${redactedValue}` : pair;
    })
    .join('&');
  return `${url.slice(0, start + 1)}${query}${url.slice(end)}`;
}

// `?name=value` or `&name=value` inside a serialised JSON log line; the value ends at `&`,
// `#`, whitespace or the end of the JSON string (a backslash escape is part of the value).
const parameterInLine = /([?&])([^=&#?\s"\\]{1,200})=((?:[^&#\s"\\]|\\.)*)/g;

/**
 * A serialised log line with credential-like query parameter values redacted wherever a URL
 * appears in it (the request URL, an error message, an upstream URL). Installed as pino's
 * `streamWrite` hook, so every line the gateway logs passes through it.
 */
export function redactLogLine(line: string): string {
  if (!line.includes('?') && !line.includes('&')) return line;
  return line.replace(parameterInLine, (match, separator: string, name: string) =>
    isCredentialParameter(name) ? `${separator}${name}=${redactedValue}` : match,
  );
}
