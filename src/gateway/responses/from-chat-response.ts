import { providerError } from '../../errors/gateway-error.ts';
import { endingOf, functionCallIdOf, messageIdOf, responseObject, type ResponseSeed } from './response-object.ts';
import { responsesUsageOf } from './usage.ts';

type Fields = Record<string, unknown>;

const isRecord = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A chat completion -> the Response object the client asked for: the assistant's text as a
 * `message` item with one `output_text` part, each tool call as a `function_call` item,
 * usage in the Responses shape. Pure.
 */
export function responseFromChat(completion: Fields, seed: ResponseSeed): Record<string, unknown> {
  const choices = completion['choices'];
  const choice = Array.isArray(choices) && isRecord(choices[0]) ? choices[0] : null;
  if (choice === null) {
    throw providerError(`upstream ${seed.provider} returned no choices`, { provider: seed.provider, code: 'invalid_upstream_response' });
  }
  const message = isRecord(choice['message']) ? choice['message'] : {};
  const output: Fields[] = [];
  const text = textOf(message['content']);
  const refusal = typeof message['refusal'] === 'string' && message['refusal'] !== '' ? message['refusal'] : null;
  const toolCalls = Array.isArray(message['tool_calls']) ? message['tool_calls'].filter(isRecord) : [];
  const ending = endingOf(choice['finish_reason']);
  if (text !== '' || refusal !== null || toolCalls.length === 0) {
    const part = refusal === null ? outputTextPart(text) : { type: 'refusal', refusal };
    output.push(messageItem(seed, 0, [part], ending.status === 'incomplete' ? 'incomplete' : 'completed'));
  }
  for (const [index, call] of toolCalls.entries()) {
    const fn = isRecord(call['function']) ? call['function'] : {};
    output.push(
      functionCallItem(seed, index, {
        callId: typeof call['id'] === 'string' ? call['id'] : '',
        name: typeof fn['name'] === 'string' ? fn['name'] : '',
        arguments: typeof fn['arguments'] === 'string' ? fn['arguments'] : '',
        status: 'completed',
      }),
    );
  }
  const usage = isRecord(completion['usage']) ? completion['usage'] : null;
  return responseObject(
    { ...seed, createdAt: typeof completion['created'] === 'number' ? completion['created'] : seed.createdAt },
    {
      ...ending,
      ...(typeof completion['model'] === 'string' ? { model: completion['model'] } : {}),
      output,
      usage: responsesUsageOf(usage),
    },
  );
}

/** Plain text, or the text parts of a content array joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isRecord)
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');
}

export function outputTextPart(text: string): Fields {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

export function messageItem(seed: ResponseSeed, index: number, content: Fields[], status: string): Fields {
  return { id: messageIdOf(seed, index), type: 'message', status, content, role: 'assistant' };
}

export interface FunctionCallFields {
  callId: string;
  name: string;
  arguments: string;
  status: string;
}

export function functionCallItem(seed: ResponseSeed, index: number, call: FunctionCallFields): Fields {
  return {
    id: functionCallIdOf(seed, index),
    type: 'function_call',
    status: call.status,
    arguments: call.arguments,
    call_id: call.callId,
    name: call.name,
  };
}
