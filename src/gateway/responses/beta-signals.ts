/**
 * OpenAI's beta signals on the Responses API, which a native upstream receives as the client
 * sent them (the SDK's `betas` option): the `openai-beta` header and the `beta` query
 * parameter. Nothing else of the client's headers or query is forwarded.
 */
export interface BetaSignals {
  /** Headers to add upstream: `openai-beta` when the client sent it. */
  readonly headers: Readonly<Record<string, string>>;
  /** `?beta=...` when the client's query had `beta`, else ''. */
  readonly query: string;
}

export const noBetaSignals: BetaSignals = Object.freeze({ headers: Object.freeze({}), query: '' });

/** The beta signals of a request: its `openai-beta` header (repeated ones joined) and the `beta` parameter of its URL. */
export function betaSignalsOf(header: string | readonly string[] | undefined, url: string): BetaSignals {
  const value = Array.isArray(header) ? header.join(', ') : (header as string | undefined);
  const start = url.indexOf('?');
  const beta = start === -1 ? null : new URLSearchParams(url.slice(start + 1)).get('beta');
  if ((value === undefined || value === '') && beta === null) return noBetaSignals;
  return {
    headers: value === undefined || value === '' ? {} : { 'openai-beta': value },
    query: beta === null ? '' : `?${new URLSearchParams({ beta }).toString()}`,
  };
}
