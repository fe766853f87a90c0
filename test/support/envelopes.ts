import { expect } from 'vitest';

import { parseJson, type RawReply } from './http.ts';

// Assertions on the error envelopes a raw reply carries: the gateway's own (CONTRACT section 4),
// Anthropic's (/v1/messages) and Google's (the Gemini dialect).

export interface EnvelopeError {
  type: string;
  message: string;
  code: string | null;
  param: string | null;
  provider: string;
  status_code: number;
}

export interface ExpectedError {
  status: number;
  type: string;
  /** Defaults to `gateway`. */
  provider?: string;
  code?: string | null;
  param?: string | null;
}

const envelopeKeys = ['code', 'message', 'param', 'provider', 'status_code', 'type'];

/** Asserts that a raw reply is exactly the CONTRACT section 4 envelope; returns its `error`. */
export function expectEnvelope(reply: RawReply, expected: ExpectedError): EnvelopeError {
  expect(reply.status, reply.text).toBe(expected.status);
  expect(String(reply.headers['content-type'])).toMatch(/^application\/json/);
  const body = parseJson(reply.text);
  expect(Object.keys(body)).toEqual(['error']);
  const error = body['error'] as EnvelopeError;
  expect(Object.keys(error).sort()).toEqual(envelopeKeys);
  expect(error.type).toBe(expected.type);
  expect(error.status_code).toBe(expected.status);
  expect(error.provider).toBe(expected.provider ?? 'gateway');
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.code === null || typeof error.code === 'string').toBe(true);
  expect(error.param === null || typeof error.param === 'string').toBe(true);
  if (expected.code !== undefined) expect(error.code).toBe(expected.code);
  if (expected.param !== undefined) expect(error.param).toBe(expected.param);
  return error;
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

export interface GoogleEnvelope {
  error: { code: number; message: string; status: string; details: Array<{ reason: string; metadata: Record<string, string> }> };
}

/** Asserts a raw reply is Google's error envelope with this status and canonical status name. */
export function expectGoogleEnvelope(reply: RawReply, code: number, status: string): GoogleEnvelope {
  expect(reply.status, reply.text).toBe(code);
  expect(String(reply.headers['content-type'])).toMatch(/^application\/json/);
  const body = parseJson(reply.text) as unknown as GoogleEnvelope;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ code, status });
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}
