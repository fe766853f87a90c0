import type { ChatRequestBody } from '../providers/provider.ts';

export type GuardrailMode = 'enforce' | 'monitor';

/** A match in a text: `[start, end)` and what it is (`email`, `openai_key`, `term`...). */
export interface Span {
  start: number;
  end: number;
  entity: string;
}

/** Which requests a guardrail sees; an empty list means every one. */
export interface GuardrailScope {
  userPaths: readonly string[];
  models: readonly string[];
  endpoints: readonly string[];
}

interface GuardrailBase {
  readonly name: string;
  readonly type: string;
  readonly mode: GuardrailMode;
  readonly scope: GuardrailScope;
}

/**
 * A guardrail that finds spans in texts (pii, secrets, deny_list): it redacts them or blocks
 * the request, on the input, the output (JSON and streams) or both. `find` must run in linear
 * time; `holdBack` bounds how far back a stream keeps text that could still start a match.
 */
export interface TextGuardrail extends GuardrailBase {
  readonly kind: 'text';
  readonly action: 'redact' | 'block';
  readonly input: boolean;
  readonly output: boolean;
  readonly holdBack: number;
  /** A new array on every call: `scan` sorts it and drops overlaps in place. */
  find(text: string): Span[];
  /** The same, letting the event loop run during a long search (deny_list patterns); used on request texts. */
  readonly findAsync?: (text: string) => Promise<Span[]>;
  replacement(entity: string): string;
}

/** A guardrail that judges the whole request (max_input_tokens): the reason to block, or null. */
export interface RequestGuardrail extends GuardrailBase {
  readonly kind: 'request';
  check(body: ChatRequestBody): Promise<string | null>;
}

/** Checks a JSON answer against the JSON schema the request asked for (json_schema). */
export interface SchemaGuardrail extends GuardrailBase {
  readonly kind: 'schema';
}

export type Guardrail = TextGuardrail | RequestGuardrail | SchemaGuardrail;
