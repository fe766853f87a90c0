import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'vitest';

import type { GatewayProcess } from '../support/gateway-process.ts';
import { MASTER_KEY, parseJson } from './helpers.ts';
import type { RawReply } from './helpers.ts';

// Helpers of the /v1/messages suites: the official Anthropic client pointed at the gateway,
// and assertions on Anthropic's error envelope and event stream framing.

/** The official client; it appends /v1/messages to the gateway's origin and sends x-api-key. */
export function anthropicClient(gateway: GatewayProcess, apiKey = MASTER_KEY, headers: Record<string, string> = {}): Anthropic {
  return new Anthropic({ baseURL: gateway.url, apiKey, maxRetries: 0, timeout: 10_000, defaultHeaders: headers });
}

export interface AnthropicEnvelope {
  type: string;
  error: { type: string; message: string };
}

/** Asserts a raw reply is exactly Anthropic's error envelope with the given status and type. */
export function expectAnthropicEnvelope(reply: RawReply, status: number, type: string): AnthropicEnvelope {
  expect(reply.status, reply.text).toBe(status);
  expect(String(reply.headers['content-type'])).toMatch(/^application\/json/);
  const body = parseJson(reply.text) as unknown as AnthropicEnvelope;
  expect(Object.keys(body).sort()).toEqual(['error', 'type']);
  expect(body.type).toBe('error');
  expect(Object.keys(body.error).sort()).toEqual(['message', 'type']);
  expect(body.error.type).toBe(type);
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}

/** Asserts the client raised `errorClass` for an Anthropic envelope of `type`; returns it. */
export function expectSdkError<T extends InstanceType<typeof Anthropic.APIError>>(
  thrown: unknown,
  errorClass: abstract new (...args: never[]) => T,
  status: number,
  type: string,
): T {
  expect(thrown).toBeInstanceOf(errorClass);
  const error = thrown as T;
  expect(error.status).toBe(status);
  expect(error.type).toBe(type);
  const body = error.error as AnthropicEnvelope | undefined;
  expect(body?.type).toBe('error');
  expect(body?.error.type).toBe(type);
  return error;
}

export interface SseFrame {
  event: string;
  data: Record<string, unknown>;
}

/** Anthropic SSE frames: each names its event and carries JSON of the same `type`. */
export function parseAnthropicSse(text: string): SseFrame[] {
  const frames = text.split('\n\n').filter((frame) => frame.trim() !== '');
  return frames.map((frame) => {
    const match = /^event: (\S+)\ndata: (.*)$/s.exec(frame);
    expect(match, frame).not.toBeNull();
    const event = match?.[1] ?? '';
    const data = parseJson(match?.[2] ?? '');
    expect(data['type']).toBe(event);
    return { event, data };
  });
}
