import { randomUUID } from 'node:crypto';

import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { expect } from 'vitest';

import type { AnthropicEnvelope, EnvelopeError, ExpectedError, GoogleEnvelope } from './envelopes.ts';
import { type GatewayProcess, MASTER_KEY } from './gateway-process.ts';

// The official clients (openai, @anthropic-ai/sdk, @google/genai) pointed at the gateway, and
// assertions on the errors each raises.

export function openAIClient(gateway: GatewayProcess, apiKey = MASTER_KEY): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0, timeout: 10_000 });
}

/** The official client; it appends /v1/messages to the gateway's origin and sends x-api-key. */
export function anthropicClient(gateway: GatewayProcess, apiKey = MASTER_KEY, headers: Record<string, string> = {}): Anthropic {
  return new Anthropic({ baseURL: gateway.url, apiKey, maxRetries: 0, timeout: 10_000, defaultHeaders: headers });
}

/** A user turn of its own, so no two tests share a response-cache entry. */
export function userTurn(text = 'Say hello'): Anthropic.MessageParam[] {
  return [{ role: 'user', content: `${text} (${randomUUID()})` }];
}

/** It calls <baseUrl>/v1beta/models/<model>:<method>, the key in x-goog-api-key. */
export function geminiClient(gateway: GatewayProcess, apiKey = MASTER_KEY, headers: Record<string, string> = {}): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: gateway.url, headers, timeout: 10_000 } });
}

/** The rejection of a call that must fail. */
export async function rejectionOf(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Asserts an openai-client error carries the envelope fields; returns the envelope's `error`. */
export function expectClientError(thrown: unknown, expected: ExpectedError): EnvelopeError {
  expect(thrown).toBeInstanceOf(OpenAI.APIError);
  const apiError = thrown as InstanceType<typeof OpenAI.APIError>;
  expect(apiError.status).toBe(expected.status);
  const error = apiError.error as EnvelopeError | undefined;
  expect(error).toBeDefined();
  expect(error?.type).toBe(expected.type);
  expect(error?.status_code).toBe(expected.status);
  expect(error?.provider).toBe(expected.provider ?? 'gateway');
  if (expected.code !== undefined) expect(error?.code).toBe(expected.code);
  if (expected.param !== undefined) expect(error?.param).toBe(expected.param);
  return error as EnvelopeError;
}

/** Asserts the Anthropic client raised `errorClass` for an Anthropic envelope of `type`; returns it. */
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

/** Asserts the Google SDK raised an ApiError for Google's envelope; returns the envelope. */
export function expectApiError(thrown: unknown, code: number, status: string): GoogleEnvelope {
  expect(thrown).toBeInstanceOf(ApiError);
  const error = thrown as ApiError;
  expect(error.status).toBe(code);
  // The SDK keeps the body, JSON-encoded, as its message (after "got status: ..." for stream errors).
  const body = JSON.parse(error.message.slice(error.message.indexOf('{'))) as GoogleEnvelope;
  expect(body.error).toMatchObject({ code, status });
  return body;
}

/** The id the gateway gave a request, from the Google SDK's view of the response headers. */
export function requestIdOf(response: { sdkHttpResponse?: { headers?: Record<string, string> } }): string {
  return response.sdkHttpResponse?.headers?.['x-request-id'] ?? '';
}
