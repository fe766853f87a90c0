import type { IncomingHttpHeaders } from 'node:http';

/**
 * Which headers cross the gateway on relayed requests (passthrough, files, audio). Client
 * credentials never reach a provider (the instance's own are injected), provider cookies
 * never reach a client, and hop-by-hop headers stay on their own hop (RFC 9110 section 7.6.1).
 */

/** Headers that belong to one connection, not to the message. */
const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length', 'expect']);

/** Credentials a client may send to the gateway, for the gateway. */
const clientCredentials = new Set(['authorization', 'x-api-key', 'api-key', 'cookie', 'x-goog-api-key']);

/**
 * Headers that pick which account, organisation or project the instance's own credentials act
 * for: OpenAI's `OpenAI-Organization` and `OpenAI-Project`, Google's `x-goog-user-project`
 * (the quota and billing project of Gemini and Vertex), Hugging Face's `X-HF-Bill-To` (an
 * OpenAI-compatible router billing an organisation). A tenant must not choose that for the
 * shared key, so they are dropped unless the instance sets `forward_account_headers: true`
 * (ADR 30). Anthropic, Azure and Bedrock select the account by the credential (or the URL) only.
 */
const accountHeaders = new Set(['openai-organization', 'openai-project', 'x-goog-user-project', 'x-hf-bill-to']);

/** What the gateway itself says about the request, not the client's to forward. */
const gatewayOwned = new Set(['forwarded', 'x-real-ip', 'x-request-id']);

/** Response headers the gateway sets itself. */
const responseOwned = new Set(['set-cookie', 'x-request-id', 'date', 'server']);

function dropped(name: string, extra: ReadonlySet<string>, connectionTokens: ReadonlySet<string>): boolean {
  return (
    hopByHop.has(name) || name.startsWith('proxy-') || extra.has(name) || connectionTokens.has(name) || name.startsWith('x-forwarded-')
  );
}

/** The header names a `Connection` header lists (they are hop-by-hop too). */
function connectionTokensOf(headers: IncomingHttpHeaders | Record<string, string | string[] | number | undefined>): Set<string> {
  const value = headers['connection'];
  const text = Array.isArray(value) ? value.join(',') : typeof value === 'string' ? value : '';
  return new Set(
    text
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter((token) => token !== ''),
  );
}

/**
 * The client's request headers as the upstream should see them: without credentials,
 * hop-by-hop headers, the gateway's own (`userPathHeader`, forwarding headers) and, unless the
 * instance allows them, the headers that select an account or project.
 */
export function upstreamRequestHeaders(
  headers: IncomingHttpHeaders,
  userPathHeader: string,
  options: { readonly forwardAccountHeaders?: boolean } = {},
): Record<string, string> {
  const tokens = connectionTokensOf(headers);
  const extra = new Set([...clientCredentials, ...gatewayOwned, userPathHeader.toLowerCase()]);
  if (options.forwardAccountHeaders !== true) for (const name of accountHeaders) extra.add(name);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || dropped(name, extra, tokens)) continue;
    kept[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return kept;
}

/** The upstream's response headers as the client should see them. */
export function clientResponseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const lowered = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const tokens = connectionTokensOf(lowered);
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(lowered)) {
    if (value === undefined || dropped(name, responseOwned, tokens)) continue;
    kept[name] = value;
  }
  return kept;
}
