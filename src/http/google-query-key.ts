import type { IncomingHttpHeaders } from 'node:http';
import { isGeminiDialectUrl } from '../dialects/gemini/errors.ts';

/**
 * Google's clients may send the key in the query (`?key=<token>`) instead of `x-goog-api-key`:
 * accepted on the Gemini dialect's routes only, when no credential header is present.
 */
export function withGoogleQueryKey(headers: IncomingHttpHeaders, url: string): IncomingHttpHeaders {
  if (headers.authorization !== undefined || headers['x-api-key'] !== undefined || headers['x-goog-api-key'] !== undefined) return headers;
  const query = url.indexOf('?');
  if (query === -1 || !isGeminiDialectUrl(url)) return headers;
  const key = new URLSearchParams(url.slice(query + 1)).get('key');
  return key === null || key === '' ? headers : { ...headers, 'x-goog-api-key': key };
}
