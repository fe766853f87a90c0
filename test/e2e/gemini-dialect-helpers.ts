import { ApiError, GoogleGenAI } from '@google/genai';
import { expect } from 'vitest';

import type { GatewayProcess } from '../support/gateway-process.ts';
import { MASTER_KEY, parseJson, type RawReply } from './helpers.ts';

// Helpers of the Gemini dialect suites: the official @google/genai client pointed at the
// gateway (it calls <baseUrl>/v1beta/models/<model>:<method>, key in x-goog-api-key) and
// assertions on Google's error envelope.

export function geminiClient(gateway: GatewayProcess, apiKey = MASTER_KEY, headers: Record<string, string> = {}): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: gateway.url, headers, timeout: 10_000 } });
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

/** Asserts the SDK raised an ApiError for Google's envelope; returns the envelope. */
export function expectApiError(thrown: unknown, code: number, status: string): GoogleEnvelope {
  expect(thrown).toBeInstanceOf(ApiError);
  const error = thrown as ApiError;
  expect(error.status).toBe(code);
  // The SDK keeps the body, JSON-encoded, as its message (after "got status: ..." for stream errors).
  const body = JSON.parse(error.message.slice(error.message.indexOf('{'))) as GoogleEnvelope;
  expect(body.error).toMatchObject({ code, status });
  return body;
}

/** The id the gateway gave a request, from the SDK's view of the response headers. */
export function requestIdOf(response: { sdkHttpResponse?: { headers?: Record<string, string> } }): string {
  return response.sdkHttpResponse?.headers?.['x-request-id'] ?? '';
}
