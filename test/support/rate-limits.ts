import { Agent, request } from 'undici';
import { expect } from 'vitest';

import { type EnvelopeError, expectEnvelope } from './envelopes.ts';
import type { GatewayProcess } from './gateway-process.ts';
import { bearer, call, callJson, chatBody, parseJson, type RawReply } from './http.ts';
import { eventually } from './wait.ts';

// Rate limits (CONTRACT section 6): the rule listing of GET /admin/rate-limits, chat calls on a
// user path (abortable ones too) and the 429 of a breach.

/** One rule of `GET /admin/rate-limits` (CONTRACT section 6). */
export interface ListedRule {
  scope: string;
  subject: string;
  user_path?: string;
  period: string;
  period_seconds: number;
  max_requests: number | null;
  max_tokens: number | null;
  origin: string;
  created_at: string;
  updated_at: string;
  window_start: string | null;
  window_end: string | null;
  requests_used: number;
  requests_remaining: number | null;
  tokens_used: number;
  tokens_remaining: number | null;
  in_flight: number;
}

export interface RuleListing {
  rate_limits: ListedRule[];
  server_time: string;
}

/** A chat completion on `userPath` (the X-User-Path header). */
export function chatAt(
  gateway: GatewayProcess,
  userPath: string,
  model = 'openai/mock-model',
  extra: Record<string, unknown> = {},
): Promise<RawReply> {
  return call(gateway, '/v1/chat/completions', { headers: { 'x-user-path': userPath }, body: chatBody(model, extra) });
}

interface Started {
  status: number;
  headers: Record<string, unknown>;
  firstChunk: string;
}

export interface AbortableChat {
  /** Resolves with the response, once its body has been read to the end. */
  readonly reply: Promise<RawReply>;
  /** Resolves with the first bytes of the body once the response has started. */
  readonly started: Promise<Started>;
  /** Ends the exchange from the client side (a disconnect). */
  abort(): void;
}

/**
 * A chat request the test will abort, on a connection of its own: aborting an exchange of the
 * shared keep-alive pool can leave another pooled connection open during the gateway's shutdown
 * drain (seen with bare node:http as well), which would slow every later stop by 30 s.
 */
export function abortableChat(
  gateway: GatewayProcess,
  userPath: string,
  model: string,
  extra: Record<string, unknown> = {},
): AbortableChat {
  const controller = new AbortController();
  const agent = new Agent();
  let markStarted: (value: Started) => void = () => {};
  let failStart: (error: unknown) => void = () => {};
  const started = new Promise<Started>((resolve, reject) => {
    markStarted = resolve;
    failStart = reject;
  });
  started.catch(() => {}); // a test that never waits for the start must not see an unhandled rejection
  const reply = (async (): Promise<RawReply> => {
    const response = await request(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json', 'x-user-path': userPath },
      body: JSON.stringify(chatBody(model, extra)),
      signal: controller.signal,
      dispatcher: agent,
    });
    let text = '';
    for await (const chunk of response.body) {
      if (text === '') markStarted({ status: response.statusCode, headers: response.headers, firstChunk: String(chunk) });
      text += String(chunk);
    }
    return { status: response.statusCode, headers: response.headers, text };
  })();
  reply
    .then(
      () => agent.close(),
      (error: unknown) => {
        failStart(error);
        return agent.destroy();
      },
    )
    .catch(() => {});
  return { reply, started, abort: () => controller.abort() };
}

/** 'answered' or 'aborted', whichever way the exchange ended. */
export const outcomeOf = (chat: AbortableChat): Promise<'answered' | 'aborted'> =>
  chat.reply.then(
    () => 'answered',
    () => 'aborted',
  );

const ruleKeys = [
  'created_at',
  'in_flight',
  'max_requests',
  'max_tokens',
  'origin',
  'period',
  'period_seconds',
  'requests_remaining',
  'requests_used',
  'scope',
  'subject',
  'tokens_remaining',
  'tokens_used',
  'updated_at',
  'window_end',
  'window_start',
];

/** Asserts the list body of CONTRACT section 6 (every field of every rule); returns it. */
export function expectListing(reply: RawReply): RuleListing {
  expect(reply.status, reply.text).toBe(200);
  const body = parseJson(reply.text);
  expect(Object.keys(body).sort()).toEqual(['rate_limits', 'server_time']);
  const listing = body as unknown as RuleListing;
  expect(Number.isNaN(Date.parse(listing.server_time)), listing.server_time).toBe(false);
  expect(Array.isArray(listing.rate_limits)).toBe(true);
  for (const rule of listing.rate_limits) {
    const expected = rule.scope === 'user_path' ? [...ruleKeys, 'user_path'].sort() : ruleKeys;
    expect(Object.keys(rule).sort(), JSON.stringify(rule)).toEqual(expected);
    if (rule.scope === 'user_path') expect(rule.user_path).toBe(rule.subject);
  }
  return listing;
}

export async function listRules(gateway: GatewayProcess): Promise<RuleListing> {
  return expectListing(await call(gateway, '/admin/rate-limits'));
}

/** The listed rule with this scope, subject and period label, or undefined. */
export async function findRule(gateway: GatewayProcess, scope: string, subject: string, period: string): Promise<ListedRule | undefined> {
  const { rate_limits: rules } = await listRules(gateway);
  return rules.find((rule) => rule.scope === scope && rule.subject === subject && rule.period === period);
}

/** PUT /admin/rate-limits, expecting 200 and the list body. */
export async function putRule(gateway: GatewayProcess, body: Record<string, unknown>): Promise<RuleListing> {
  return expectListing(await call(gateway, '/admin/rate-limits', { method: 'PUT', body }));
}

/** Waits until the rule's `in_flight` is `expected`; returns the rule. */
export function inFlightBecomes(gateway: GatewayProcess, subject: string, expected: number, timeoutMs = 2_000): Promise<ListedRule> {
  return eventually(
    async () => {
      const rule = await findRule(gateway, 'user_path', subject, 'concurrent');
      return rule?.in_flight === expected ? rule : undefined;
    },
    `in_flight of ${subject} back to ${expected}`,
    timeoutMs,
  );
}

export interface Rejection {
  error: EnvelopeError;
  /** Retry-After in whole seconds. */
  retryAfter: number;
  retryAfterMs: number;
}

/**
 * Asserts the 429 of CONTRACT section 6 with exactly `message`: the envelope, Retry-After and
 * retry-after-ms, and the breached trio (`requests` or `tokens`) with remaining 0.
 */
export function expectRateLimited(reply: RawReply, message: string, trio: 'requests' | 'tokens' | null = 'requests'): Rejection {
  const error = expectEnvelope(reply, {
    status: 429,
    type: 'rate_limit_error',
    code: 'rate_limit_exceeded',
    provider: 'ratelimit',
    param: null,
  });
  expect(error.message).toBe(message);
  const retryAfterHeader = String(reply.headers['retry-after']);
  expect(retryAfterHeader, 'Retry-After is whole seconds').toMatch(/^[1-9]\d*$/);
  const retryAfter = Number(retryAfterHeader);
  const retryAfterMs = Number(reply.headers['retry-after-ms']);
  expect(Number.isInteger(retryAfterMs), `retry-after-ms: ${String(reply.headers['retry-after-ms'])}`).toBe(true);
  expect(Math.ceil(retryAfterMs / 1000), 'Retry-After = ceil(retry-after-ms / 1000)').toBe(retryAfter);
  if (trio !== null) {
    expect(reply.headers[`x-ratelimit-remaining-${trio}`]).toBe('0');
    expect(reply.headers[`x-ratelimit-limit-${trio}`]).toMatch(/^\d+$/);
    expect(reply.headers[`x-ratelimit-reset-${trio}`]).toMatch(/^\d+$/);
  }
  return { error, retryAfter, retryAfterMs };
}

/** The `x-ratelimit-*` headers of a reply, by name. */
export function rateLimitHeaders(reply: RawReply): Record<string, string> {
  return Object.fromEntries(
    Object.entries(reply.headers).flatMap(([name, value]) => (name.startsWith('x-ratelimit-') ? [[name, String(value)]] : [])),
  );
}

/** One rule of GET /admin/rate-limits (CONTRACT section 6), the fields these suites read. */
export interface LiveRule {
  scope: string;
  subject: string;
  period: string;
  requests_used: number;
  tokens_used: number;
  max_requests: number | null;
  max_tokens: number | null;
  in_flight: number;
}

export async function rateLimitRules(gateway: GatewayProcess): Promise<LiveRule[]> {
  const body = await callJson(gateway, '/admin/rate-limits', 200);
  expect(Array.isArray(body['rate_limits'])).toBe(true);
  return body['rate_limits'] as LiveRule[];
}

/** The one listed rule of a scope and subject (and period, when given), asserting it exists. */
export async function ruleOf(gateway: GatewayProcess, scope: string, subject: string, period?: string): Promise<LiveRule> {
  const rules = (await rateLimitRules(gateway)).filter(
    (rule) => rule.scope === scope && rule.subject === subject && (period === undefined || rule.period === period),
  );
  expect(rules, `one ${scope} rule on ${subject} ${period ?? ''}`).toHaveLength(1);
  return rules[0] as LiveRule;
}

/** `x-ratelimit-*` header names of a reply. */
export function rateLimitHeaderNames(reply: RawReply): string[] {
  return Object.keys(reply.headers).filter((name) => name.toLowerCase().startsWith('x-ratelimit-'));
}
