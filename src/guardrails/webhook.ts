import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatRequestBody } from '../providers/provider.ts';

export interface WebhookOptions {
  url: string;
  /** HMAC-SHA256 key for the `x-guardrail-signature: sha256=<hex>` header over the exact body sent. */
  secret: string | null;
  timeoutMs: number;
  retries: number;
  /** When the hook cannot answer (network, timeout, non-2xx, unreadable answer): pass (true) or block (false). */
  failOpen: boolean;
}

/**
 * An external guardrail: POSTs `{guardrail, stage: "input", request}` (the chat-shaped request)
 * and reads `{"action": "pass"}` or `{"action": "block", "reason": "..."}`. Failures are retried
 * (`retries` more times, 100 ms apart), then decided by `fail_open`. The reason to block, or null.
 */
export function webhookCheck(name: string, options: WebhookOptions): (body: ChatRequestBody) => Promise<string | null> {
  return async (body) => {
    const payload = JSON.stringify({ guardrail: name, stage: 'input', request: body });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.secret !== null)
      headers['x-guardrail-signature'] = `sha256=${createHmac('sha256', options.secret).update(payload).digest('hex')}`;
    for (let attempt = 0; attempt <= options.retries; attempt++) {
      if (attempt > 0) await sleep(100);
      const verdict = await ask(options, payload, headers);
      if (verdict !== undefined) return verdict;
    }
    return options.failOpen ? null : 'the guardrail webhook did not answer (fail_open is off)';
  };
}

/** The hook's verdict; undefined when it failed (to retry). */
async function ask(options: WebhookOptions, payload: string, headers: Record<string, string>): Promise<string | null | undefined> {
  try {
    // undici's index (fetch, WebSocket, ...) is loaded only when a webhook guardrail calls out (ADR 16).
    const { request } = await import('../lazy/undici-request.ts');
    const response = await request(options.url, { method: 'POST', headers, body: payload, signal: AbortSignal.timeout(options.timeoutMs) });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode > 299) return undefined;
    const answer = JSON.parse(text) as { action?: unknown; reason?: unknown };
    if (answer.action === 'pass') return null;
    if (answer.action !== 'block') return undefined;
    // The hook's reason is shown to the client: kept short and on one line.
    return typeof answer.reason === 'string' && answer.reason.trim() !== ''
      ? answer.reason.replace(/\s+/g, ' ').slice(0, 200)
      : 'refused by the webhook';
  } catch {
    return undefined;
  }
}
