import { providerError } from '../../errors/gateway-error.ts';
import { mapUpstreamError } from '../upstream-errors.ts';
import { convertUsage, mapStopReason } from './convert-chat-response.ts';
import type { StreamFrame } from './event-stream.ts';
import { isRecord, type ConverseUsage, type JsonObject } from './wire.ts';

export interface StreamOptions {
  /** The instance name, used in errors. */
  provider: string;
  /** The completion id stamped on every chunk. */
  id: string;
  /** Unix seconds stamped as `created` on every chunk. */
  created: number;
  /** The model asked for. */
  model: string;
  /** Whether to end with OpenAI's usage chunk (`choices: []`), as `stream_options.include_usage` asks. */
  includeUsage: boolean;
}

/** HTTP statuses of the exceptions ConverseStream sends inside a stream (`:exception-type`). */
export const exceptionStatuses: Readonly<Record<string, number>> = {
  throttlingException: 429,
  validationException: 400,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
  modelTimeoutException: 504,
  internalServerException: 500,
  serviceUnavailableException: 503,
  modelStreamErrorException: 502,
  modelNotReadyException: 429,
};

const doneFrame = 'data: [DONE]\n\n';

interface ToolBlock {
  index: number;
  sawArguments: boolean;
}

/**
 * Turns ConverseStream events into OpenAI `chat.completion.chunk` SSE frames: messageStart ->
 * the role chunk, text / reasoning / toolUse deltas -> content / reasoning_content /
 * tool-call argument deltas, messageStop -> the finish chunk, metadata -> the usage chunk
 * (when asked for) and `[DONE]`. An exception frame throws the upstream's error, mapped like
 * an HTTP error answer of its type.
 */
export class BedrockStreamConverter {
  private readonly options: StreamOptions;
  private usage: ConverseUsage = {};
  private readonly tools = new Map<number, ToolBlock>();
  private finishReason: string | null = null;
  private sentRole = false;
  private ended = false;

  constructor(options: StreamOptions) {
    this.options = options;
  }

  /** The OpenAI frames for some upstream frames ('' when they produce none). */
  push(frames: readonly StreamFrame[]): string {
    let text = '';
    for (const frame of frames) {
      if (this.ended) break;
      text += this.convert(frame);
    }
    return text;
  }

  /** Called when the upstream body ends: a stream cut before messageStop is a provider error. */
  finish(): string {
    if (this.ended) return '';
    if (this.finishReason !== null) return this.end();
    throw providerError(`upstream ${this.options.provider} ended the stream before messageStop`, {
      provider: this.options.provider,
      code: 'upstream_stream_incomplete',
    });
  }

  private convert(frame: StreamFrame): string {
    const type = frame.headers[':message-type'];
    if (type === 'exception') throw this.exception(frame.headers[':exception-type'] ?? '', frame.payload);
    if (type === 'error') {
      const body = JSON.stringify({ message: frame.headers[':error-message'] ?? frame.headers[':error-code'] ?? 'stream error' });
      throw mapUpstreamError(502, body, this.options.provider);
    }
    const event = this.parse(frame.payload);
    switch (frame.headers[':event-type']) {
      case 'messageStart':
        return ''; // the role chunk goes out with the first content (see frame)
      case 'contentBlockStart':
        return this.blockStart(Number(event['contentBlockIndex']), isRecord(event['start']) ? event['start'] : {});
      case 'contentBlockDelta':
        return this.blockDelta(Number(event['contentBlockIndex']), isRecord(event['delta']) ? event['delta'] : {});
      case 'contentBlockStop':
        return this.blockStop(Number(event['contentBlockIndex']));
      case 'messageStop':
        this.finishReason = mapStopReason(event['stopReason']);
        return this.frame({}, this.finishReason);
      case 'metadata':
        if (isRecord(event['usage'])) this.usage = event['usage'];
        return this.finishReason === null ? '' : this.end();
      default:
        return '';
    }
  }

  private parse(payload: string): JsonObject {
    try {
      const parsed: unknown = JSON.parse(payload);
      if (isRecord(parsed)) return parsed;
    } catch {
      // reported below
    }
    throw providerError(`upstream ${this.options.provider} sent a stream event that is not a JSON object`, {
      provider: this.options.provider,
      code: 'invalid_upstream_response',
    });
  }

  private blockStart(index: number, start: JsonObject): string {
    const toolUse = start['toolUse'];
    if (!isRecord(toolUse)) return '';
    const tool = { index: this.tools.size, sawArguments: false };
    this.tools.set(index, tool);
    const call = { index: tool.index, id: toolUse['toolUseId'], type: 'function', function: { name: toolUse['name'], arguments: '' } };
    return this.frame({ tool_calls: [call] });
  }

  private blockDelta(index: number, delta: JsonObject): string {
    if (typeof delta['text'] === 'string') return delta['text'] === '' ? '' : this.frame({ content: delta['text'] });
    const reasoning = delta['reasoningContent'];
    if (isRecord(reasoning)) return typeof reasoning['text'] === 'string' ? this.frame({ reasoning_content: reasoning['text'] }) : '';
    const toolUse = delta['toolUse'];
    const tool = this.tools.get(index);
    if (!isRecord(toolUse) || tool === undefined || typeof toolUse['input'] !== 'string' || toolUse['input'] === '') return '';
    tool.sawArguments = true;
    return this.frame({ tool_calls: [{ index: tool.index, function: { arguments: toolUse['input'] } }] });
  }

  /** A tool call whose input streamed no JSON has no arguments: clients still get `{}` to parse. */
  private blockStop(index: number): string {
    const tool = this.tools.get(index);
    if (tool === undefined || tool.sawArguments) return '';
    tool.sawArguments = true;
    return this.frame({ tool_calls: [{ index: tool.index, function: { arguments: '{}' } }] });
  }

  private end(): string {
    this.ended = true;
    if (!this.options.includeUsage) return doneFrame;
    const { id, created, model } = this.options;
    const chunk = { id, object: 'chat.completion.chunk', created, model, choices: [], usage: convertUsage(this.usage) };
    return `data: ${JSON.stringify(chunk)}\n\n${doneFrame}`;
  }

  private exception(type: string, payload: string): Error {
    const status = exceptionStatuses[type] ?? exceptionStatuses[lowerFirst(type)] ?? 502;
    return mapUpstreamError(status, payload, this.options.provider);
  }

  /**
   * One chunk, preceded by the role chunk the first time: until the answer has content, the
   * client has been sent nothing, so an exception right after messageStart still fails the
   * attempt (and can fail over) instead of breaking a started stream.
   */
  private frame(delta: JsonObject, finishReason: string | null = null): string {
    if (!this.sentRole) {
      this.sentRole = true;
      return this.frame({ role: 'assistant', content: '' }) + this.frame(delta, finishReason);
    }
    const { id, created, model } = this.options;
    const chunk = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
