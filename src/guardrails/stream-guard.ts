import { Transform, type Readable } from 'node:stream';
import { SseParser, type SseEvent } from '../streaming/sse-parser.ts';
import { scan } from './text-scan.ts';
import type { Span, TextGuardrail } from './types.ts';
import { isJsonObject as isObject } from '../core/json.ts';

/** Applies a guardrail's decision to text about to be released: the text to send, or throws to block. */
export type Decide = (guardrail: TextGuardrail, text: string, spans: readonly Span[]) => string;

/**
 * The text of one stream (one choice), released as soon as no match can still cover it: the
 * tail that could be the start of a match (the last `holdBack` characters, and any match that
 * reaches the end) stays held until more text, or the end, decides it.
 */
export class StreamRedactor {
  private held = '';
  private readonly guardrails: readonly TextGuardrail[];
  private readonly decide: Decide;
  private readonly holdBack: number;

  constructor(guardrails: readonly TextGuardrail[], decide: Decide) {
    this.guardrails = guardrails;
    this.decide = decide;
    this.holdBack = Math.max(...guardrails.map((guardrail) => guardrail.holdBack));
  }

  push(text: string): string {
    const buffer = this.held + text;
    let safe = buffer.length - this.holdBack;
    if (safe <= 0) {
      this.held = buffer;
      return '';
    }
    for (const guardrail of this.guardrails)
      for (const span of scan(guardrail, buffer)) if (span.start < safe && span.end > safe) safe = span.start;
    this.held = buffer.slice(safe);
    return this.release(buffer.slice(0, safe));
  }

  /** Everything held, decided (the stream or the choice has ended). */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return this.release(rest);
  }

  private release(text: string): string {
    let result = text;
    for (const guardrail of this.guardrails) {
      if (result === '') break;
      const spans = scan(guardrail, result);
      if (spans.length > 0) result = this.decide(guardrail, result, spans);
    }
    return result;
  }
}

type Json = Record<string, unknown>;

/** Rewrites the chunks of one stream: each choice's content through its own StreamRedactor. */
class GuardedChunks {
  private readonly parser = new SseParser();
  private readonly redactors = new Map<number, StreamRedactor>();
  private last: Json | null = null;
  private readonly guardrails: readonly TextGuardrail[];
  private readonly decide: Decide;

  constructor(guardrails: readonly TextGuardrail[], decide: Decide) {
    this.guardrails = guardrails;
    this.decide = decide;
  }

  push(bytes: Buffer): string {
    return this.render(this.parser.push(bytes));
  }

  finish(): string {
    return this.render(this.parser.finish()) + this.leftovers();
  }

  private render(events: SseEvent[]): string {
    let out = '';
    for (const event of events) {
      const done = event.data === '[DONE]';
      if (done) out += this.leftovers();
      out += `${event.event === null ? '' : `event: ${event.event}\n`}data: ${done ? event.data : this.rewrite(event.data)}\n\n`;
    }
    return out;
  }

  private rewrite(data: string): string {
    if (!data.includes('"choices"')) return data;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return data;
    }
    if (!isObject(chunk) || !Array.isArray(chunk['choices'])) return data;
    this.last = chunk;
    for (const choice of chunk['choices'] as unknown[])
      if (isObject(choice) && isObject(choice['delta'])) this.rewriteChoice(choice, choice['delta']);
    return JSON.stringify(chunk);
  }

  private rewriteChoice(choice: Json, delta: Json): void {
    const content = delta['content'];
    const finished = choice['finish_reason'] !== null && choice['finish_reason'] !== undefined;
    if (typeof content !== 'string' && !finished) return;
    const redactor = this.redactorOf(typeof choice['index'] === 'number' ? choice['index'] : 0);
    let text = typeof content === 'string' ? redactor.push(content) : '';
    if (finished) text += redactor.flush();
    if (typeof content === 'string' || text !== '') delta['content'] = text;
  }

  private redactorOf(index: number): StreamRedactor {
    let redactor = this.redactors.get(index);
    if (redactor === undefined) this.redactors.set(index, (redactor = new StreamRedactor(this.guardrails, this.decide)));
    return redactor;
  }

  /** Text still held when the stream ends without finish reasons: one more chunk carrying it. */
  private leftovers(): string {
    const choices = [...this.redactors].flatMap(([index, redactor]) => {
      const text = redactor.flush();
      return text === '' ? [] : [{ index, delta: { content: text }, finish_reason: null }];
    });
    if (choices.length === 0 || this.last === null) return '';
    const { id, object, created, model } = this.last;
    return `data: ${JSON.stringify({ id, object, created, model, choices })}\n\n`;
  }
}

/**
 * An OpenAI chat chunk stream with each choice's `delta.content` passed through a
 * StreamRedactor. Text held at the end of a choice goes out with its finish reason; a block
 * fails the stream with the guardrail's GatewayError, which the relays turn into an error event.
 */
export function guardStream(upstream: Readable, guardrails: readonly TextGuardrail[], decide: Decide): Readable {
  const chunks = new GuardedChunks(guardrails, decide);
  const guarded = new Transform({
    transform(bytes: Buffer, _encoding, callback) {
      try {
        callback(null, chunks.push(bytes));
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback) {
      try {
        callback(null, chunks.finish());
      } catch (error) {
        callback(error as Error);
      }
    },
  });
  upstream.on('error', (error) => guarded.destroy(error));
  guarded.on('close', () => {
    if (!upstream.destroyed) upstream.destroy();
  });
  return upstream.pipe(guarded);
}
