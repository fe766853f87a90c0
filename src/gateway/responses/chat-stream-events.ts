import type { GatewayError } from '../../errors/gateway-error.ts';
import { renderEnvelope } from '../../errors/envelope.ts';
import { mapUpstreamError } from '../../providers/upstream-errors.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { functionCallItem, messageItem, outputTextPart } from './from-chat-response.ts';
import { endingOf, messageIdOf, functionCallIdOf, responseObject, type ResponseSeed } from './response-object.ts';
import { responsesUsageOf } from './usage.ts';

type Fields = Record<string, unknown>;

const isRecord = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

interface OpenText {
  outputIndex: number;
  /** Which message item of the response this is (ids). */
  messageIndex: number;
  text: string;
}

interface OpenCall {
  outputIndex: number;
  /** Which function call of the response this is (ids). */
  callIndex: number;
  callId: string;
  name: string;
  arguments: string;
  /** Its `output_item.done` was sent (the next call opened). */
  closed: boolean;
}

/**
 * Turns an OpenAI chat chunk stream into the Responses streaming events, as SSE text:
 * `response.created`, `response.in_progress`, then per output item `output_item.added`,
 * `content_part.added`, `output_text.delta`... `output_text.done`, `content_part.done`,
 * `output_item.done` (function calls: `function_call_arguments.delta`/`.done`), and
 * `response.completed` (or `response.incomplete`) carrying the whole response and its usage.
 * Every event has an increasing `sequence_number`. Pure apart from its own state.
 */
export class ChatToResponsesEvents {
  /** The chat usage of the stream's final chunk, for metering. */
  usage: UsageObject | null = null;
  /** The whole response of the terminal event, once `finish` has run (what is stored). */
  final: Record<string, unknown> | null = null;
  private readonly seed: ResponseSeed;
  private sequence = 0;
  private readonly output: Fields[] = [];
  private text: OpenText | null = null;
  private messages = 0;
  private readonly calls = new Map<number, OpenCall>();
  private finishReason: unknown = null;
  private model: string | undefined;

  constructor(seed: ResponseSeed) {
    this.seed = seed;
  }

  start(): string {
    const response = responseObject(this.seed, { status: 'in_progress', output: [], usage: null });
    return this.frame('response.created', { response }) + this.frame('response.in_progress', { response });
  }

  /** One parsed chat chunk; an in-band `{"error":...}` chunk is thrown as the upstream's error. */
  push(chunk: Fields): string {
    if (chunk['error'] !== undefined && chunk['error'] !== null && !Array.isArray(chunk['choices'])) {
      throw mapUpstreamError(502, JSON.stringify(chunk), this.seed.provider);
    }
    if (typeof chunk['model'] === 'string' && chunk['model'] !== '') this.model = chunk['model'];
    if (isRecord(chunk['usage'])) this.usage = chunk['usage'];
    const choice = Array.isArray(chunk['choices']) && isRecord(chunk['choices'][0]) ? chunk['choices'][0] : null;
    if (choice === null) return '';
    if (typeof choice['finish_reason'] === 'string') this.finishReason = choice['finish_reason'];
    const delta = isRecord(choice['delta']) ? choice['delta'] : {};
    let text = '';
    if (typeof delta['content'] === 'string' && delta['content'] !== '') text += this.textDelta(delta['content']);
    if (Array.isArray(delta['tool_calls'])) for (const call of delta['tool_calls'].filter(isRecord)) text += this.callDelta(call);
    return text;
  }

  /** Closes every open item and sends the terminal event with the whole response. */
  finish(): string {
    const ending = endingOf(this.finishReason);
    let text = this.output.length === 0 ? this.openText()[1] : '';
    text += this.closeText(ending.status === 'incomplete' ? 'incomplete' : 'completed');
    for (const call of this.calls.values()) text += this.closeCall(call);
    const response = responseObject(this.seed, {
      ...ending,
      ...(this.model === undefined ? {} : { model: this.model }),
      output: this.output,
      usage: responsesUsageOf(this.usage),
    });
    this.final = response;
    return text + this.frame(ending.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  }

  /**
   * The stream broke: an `error` event (OpenAI's fields, plus the gateway envelope under
   * `error` so SDK clients raise it as an APIError, as on chat streams).
   */
  fail(error: GatewayError): string {
    return this.frame('error', { code: error.code, message: error.message, param: error.param, error: renderEnvelope(error).error });
  }

  private textDelta(delta: string): string {
    let text = '';
    let open = this.text;
    if (open === null) [open, text] = this.openText();
    open.text += delta;
    const ids = { item_id: messageIdOf(this.seed, open.messageIndex), output_index: open.outputIndex, content_index: 0 };
    return text + this.frame('response.output_text.delta', { ...ids, delta, logprobs: [] });
  }

  private openText(): [OpenText, string] {
    const open: OpenText = { outputIndex: this.output.length, messageIndex: this.messages, text: '' };
    this.messages += 1;
    this.text = open;
    const item = messageItem(this.seed, open.messageIndex, [], 'in_progress');
    this.output.push(item);
    const ids = { item_id: item['id'], output_index: open.outputIndex, content_index: 0 };
    const frames =
      this.frame('response.output_item.added', { output_index: open.outputIndex, item }) +
      this.frame('response.content_part.added', { ...ids, part: outputTextPart('') });
    return [open, frames];
  }

  private closeText(status = 'completed'): string {
    const open = this.text;
    if (open === null) return '';
    this.text = null;
    const part = outputTextPart(open.text);
    const item = messageItem(this.seed, open.messageIndex, [part], status);
    this.output[open.outputIndex] = item;
    const ids = { item_id: item['id'], output_index: open.outputIndex, content_index: 0 };
    return (
      this.frame('response.output_text.done', { ...ids, text: open.text, logprobs: [] }) +
      this.frame('response.content_part.done', { ...ids, part }) +
      this.frame('response.output_item.done', { output_index: open.outputIndex, item })
    );
  }

  /**
   * A tool-call delta: the first one for an index closes the items before it (items stream
   * one after another, as OpenAI sends them) and opens a `function_call` item.
   */
  private callDelta(delta: Fields): string {
    const index = typeof delta['index'] === 'number' ? delta['index'] : 0;
    const fn = isRecord(delta['function']) ? delta['function'] : {};
    let text = '';
    let call = this.calls.get(index);
    if (call === undefined) {
      text += this.closeText();
      for (const earlier of this.calls.values()) text += this.closeCall(earlier);
      call = {
        outputIndex: this.output.length,
        callIndex: this.calls.size,
        callId: typeof delta['id'] === 'string' ? delta['id'] : '',
        name: typeof fn['name'] === 'string' ? fn['name'] : '',
        arguments: '',
        closed: false,
      };
      this.calls.set(index, call);
      const item = functionCallItem(this.seed, call.callIndex, { ...call, status: 'in_progress' });
      this.output.push(item);
      text += this.frame('response.output_item.added', { output_index: call.outputIndex, item });
    }
    const piece = typeof fn['arguments'] === 'string' ? fn['arguments'] : '';
    if (piece === '') return text;
    call.arguments += piece;
    if (call.closed) {
      // A late piece for a call already closed: too late for its events, kept in the final response.
      this.output[call.outputIndex] = functionCallItem(this.seed, call.callIndex, { ...call, status: 'completed' });
      return text;
    }
    const ids = { item_id: functionCallIdOf(this.seed, call.callIndex), output_index: call.outputIndex };
    return text + this.frame('response.function_call_arguments.delta', { ...ids, delta: piece });
  }

  private closeCall(call: OpenCall): string {
    if (call.closed) return '';
    call.closed = true;
    const item = functionCallItem(this.seed, call.callIndex, { ...call, status: 'completed' });
    this.output[call.outputIndex] = item;
    const ids = { item_id: item['id'], output_index: call.outputIndex };
    return (
      this.frame('response.function_call_arguments.done', { ...ids, arguments: call.arguments, name: call.name }) +
      this.frame('response.output_item.done', { output_index: call.outputIndex, item })
    );
  }

  private frame(type: string, fields: Fields): string {
    const data = JSON.stringify({ type, sequence_number: this.sequence, ...fields });
    this.sequence += 1;
    return `event: ${type}\ndata: ${data}\n\n`;
  }
}
