/**
 * The pure parts of the passthrough `/p/{instance}/{path...}`: where a request goes under
 * the instance's base URL, and which model it names (for model rate-limit rules and usage).
 */

/**
 * The upstream path relative to the base URL, query kept. A leading `v1/` is dropped when
 * the base URL already ends in `/v1`, so `/p/openai/v1/chat/completions` and
 * `/p/openai/chat/completions` reach the same upstream route.
 */
export function passthroughPath(rest: string, query: string, baseUrl: string): string {
  let path = rest.replace(/^\/+/, '');
  if (/\/v1\/?$/.test(new URL(baseUrl).pathname) && /^v1(\/|$)/.test(path)) path = path.slice(3);
  return `${path}${query}`;
}

/** The query string of a request URL, `?` included, or ''. */
export function queryOf(url: string): string {
  const start = url.indexOf('?');
  return start === -1 ? '' : url.slice(start);
}

const modelBodyLimit = 1024 * 1024;

/** The `model` of a JSON request body, when it has one (bodies over 1 MiB are not read). */
export function modelOfBody(body: Buffer | undefined, contentType: string | undefined): string | undefined {
  if (body === undefined || body.length === 0 || body.length > modelBodyLimit) return undefined;
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(contentType ?? '')) return undefined;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const model = (parsed as Record<string, unknown>)['model'];
    return typeof model === 'string' && model !== '' ? model : undefined;
  } catch {
    return undefined;
  }
}
