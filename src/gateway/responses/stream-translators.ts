import type { GatewayError } from '../../errors/gateway-error.ts';
import { renderEnvelope } from '../../errors/envelope.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { SseEventAligner } from '../../streaming/event-aligner.ts';
import type { StreamRenderer } from '../../streaming/renderer.ts';
import { SseParser, type SseEvent } from '../../streaming/sse-parser.ts';
import { ChatStreamEnd, incompleteStream } from '../../streaming/stream-end.ts';
import { ChatToResponsesEvents } from './chat-stream-events.ts';
import type { ResponseSeed } from './response-object.ts';
import { meteredUsageOf } from './usage.ts';

/** What the relay engine writes for an upstream stream of `/v1/responses`, and what it learns from it. */
export interface ResponsesStreamTranslator extends StreamRenderer {
  start(): string;
  /** The error event that tells the client the stream broke. */
  fail(error: GatewayError): string;
}

const terminalEvents = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * A native Responses stream: bytes pass through untouched (STYLE habit 3), whole events at a
 * time (an unfinished one is held back); the parsed events are only observed, for the usage
 * of the terminal `response.completed` event (and its response, handed to `onComplete` once
 * the stream ended). A stream that ends before a terminal event (`response.completed`/
 * `.incomplete`/`.failed`, `error`) fails with `upstream_stream_incomplete`.
 */
export function nativePassthrough(
  provider: string,
  onComplete?: (response: Record<string, unknown>) => Promise<void>,
): ResponsesStreamTranslator {
  const parser = new SseParser();
  const aligner = new SseEventAligner();
  let usage: UsageObject | null = null;
  let final: Record<string, unknown> | null = null;
  let seen = 0;
  let ended = false;
  const observe = (events: SseEvent[]): void => {
    for (const event of events) {
      seen += 1;
      if (event.event === 'error') ended = true;
      if (event.event !== null && !terminalEvents.has(event.event)) continue;
      const response = responseOfEvent(event.data);
      if (response === null) continue;
      ended = true;
      usage = meteredUsageOf(response['usage']) ?? usage;
      final = response;
    }
  };
  return {
    done: false,
    upstreamError: null,
    start: () => '',
    push: (chunk) => {
      observe(parser.push(chunk));
      return aligner.push(chunk);
    },
    end: () => {
      observe(parser.finish());
      if (!ended || parser.truncated) throw incompleteStream(provider);
      return '';
    },
    settle: async () => {
      if (final !== null) await onComplete?.(final);
    },
    fail: (error) => errorFrame(error, seen),
    usage: () => usage,
  };
}

/**
 * A chat stream translated into Responses events (chat-stream-events.ts). `onComplete` gets
 * the final response of a stream that ran to its end, before the terminal event is written:
 * a client that reacts to it at once finds the response stored.
 */
export function translatedChatStream(
  seed: ResponseSeed,
  onComplete?: (response: Record<string, unknown>) => Promise<void>,
): ResponsesStreamTranslator {
  const parser = new SseParser();
  const events = new ChatToResponsesEvents(seed);
  const end = new ChatStreamEnd();
  const translate = (parsed: SseEvent[]): string => {
    let text = '';
    for (const event of parsed) {
      end.observe(event.data);
      if (event.data === '[DONE]') continue;
      const chunk = parseObject(event.data);
      if (chunk !== null) text += events.push(chunk);
    }
    return text;
  };
  return {
    done: false,
    upstreamError: null,
    start: () => events.start(),
    push: (chunk) => translate(parser.push(chunk)),
    end: () => {
      const tail = translate(parser.finish());
      // Ended before its final chunk: the relay sends `fail`'s error event instead.
      if (!end.complete(parser.truncated)) throw incompleteStream(seed.provider);
      return tail + events.finish();
    },
    settle: async () => {
      if (events.final !== null) await onComplete?.(events.final);
    },
    fail: (error) => events.fail(error),
    usage: () => events.usage,
  };
}

/** The `response` of a terminal event, parsed only for those (or unnamed events). */
function responseOfEvent(data: string): Record<string, unknown> | null {
  const event = parseObject(data);
  if (event === null || typeof event['type'] !== 'string' || !terminalEvents.has(event['type'])) return null;
  const response = event['response'];
  return typeof response === 'object' && response !== null && !Array.isArray(response) ? (response as Record<string, unknown>) : null;
}

function parseObject(data: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function errorFrame(error: GatewayError, sequence: number): string {
  const data = { type: 'error', sequence_number: sequence, code: error.code, message: error.message, param: error.param };
  return `event: error\ndata: ${JSON.stringify({ ...data, error: renderEnvelope(error).error })}\n\n`;
}
