import type { TokenEstimate } from '../../budgets/estimate.ts';
import { invalidRequest } from '../../errors/gateway-error.ts';

/**
 * The pure parts of the passthrough `/p/{instance}/{path...}`: where a request goes under
 * the instance's base URL, and which model it names (for model rate-limit rules and usage).
 */

/**
 * The upstream path relative to the base URL, query kept. A leading `v1/` is dropped when
 * the base URL already ends in `/v1`, so `/p/openai/v1/chat/completions` and
 * `/p/openai/chat/completions` reach the same upstream route. `rest` is the path as the
 * client sent it (still percent-encoded); a `.` or `..` segment, encoded or not, is refused:
 * URL resolution would take the request (and the instance's credentials) out of the base URL.
 */
export function passthroughPath(rest: string, query: string, baseUrl: string): string {
  let path = rest.replace(/^\/+/, '');
  if (hasDotSegment(path)) {
    throw invalidRequest('the passthrough path must not contain "." or ".." segments', { code: 'invalid_path' });
  }
  if (/\/v1\/?$/.test(new URL(baseUrl).pathname) && /^v1(\/|$)/.test(path)) path = path.slice(3);
  return `${path}${query}`;
}

/** The path after `/p/{instance}/` exactly as the client sent it (percent-encoding kept), query excluded. */
export function rawRestOf(url: string): string {
  const path = url.split('?', 1)[0] ?? '';
  return /^\/p\/[^/]*\/?(.*)$/s.exec(path)?.[1] ?? '';
}

/** Whether a path has a `.` or `..` segment once percent-decoded (`%2e%2e`, `..%2f`, `\` too). */
export function hasDotSegment(path: string): boolean {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape is left as it is; the raw segments are still checked.
  }
  // Once decoded a segment may still read `%2e` (double encoding): the URL parser takes that as a dot too.
  return [path, decoded].some((text) => text.split(/[\\/]/).some((segment) => /^(\.|%2e){1,2}$/i.test(segment)));
}

/** The query string of a request URL, `?` included, or ''. */
export function queryOf(url: string): string {
  const start = url.indexOf('?');
  return start === -1 ? '' : url.slice(start);
}

/**
 * A JSON object request body, parsed as the upstream reads it: whatever the content type says
 * when it opens like an object, a UTF-8 byte-order mark skipped. Its size is the server's body
 * limit: a body too large to read here would be a model call admitted unpriced and, with no
 * usage in its answer, never charged.
 */
export function jsonObjectOfBody(body: Buffer | undefined, contentType: string | undefined): Readonly<Record<string, unknown>> | undefined {
  if (body === undefined || body.length === 0) return undefined;
  if (!opensLikeObject(body) && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType ?? '')) return undefined;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8').replace(/^\uFEFF/, ''));
    return typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) ? undefined : (parsed as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/** Whether a body's first byte, past a byte-order mark and white space, opens a JSON object. */
export function opensLikeObject(body: Buffer): boolean {
  let index = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  while (index < body.length && (body[index] === 0x20 || body[index] === 0x09 || body[index] === 0x0a || body[index] === 0x0d)) index += 1;
  return body[index] === 0x7b;
}

/** The `model` of a JSON request body, when it has one. */
export function modelOfBody(body: Buffer | undefined, contentType: string | undefined): string | undefined {
  return modelOf(jsonObjectOfBody(body, contentType));
}

/** The `model` a parsed body names, when it names one. */
export function modelOf(json: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const model = json?.['model'];
  return typeof model === 'string' && model !== '' ? model : undefined;
}

/**
 * The usage charged for a model call whose answer reported none (an OpenAI stream without
 * `stream_options.include_usage`, a stream the client left before its last event, an
 * answer in a shape not read): its admission estimate, the output capped by the bytes
 * relayed (a token is at least a byte of the answer). Marked `estimated`. A budget never
 * sees such a call as free.
 */
export function unreportedUsage(estimate: TokenEstimate, relayedBytes: number): Record<string, unknown> {
  const completion = Math.min(estimate.outputTokens, relayedBytes);
  return {
    prompt_tokens: estimate.promptTokens,
    completion_tokens: completion,
    total_tokens: estimate.promptTokens + completion,
    estimated: true,
  };
}
