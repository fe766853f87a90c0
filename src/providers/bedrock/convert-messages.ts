import { convertContent, malformed } from './convert-content.ts';
import { isRecord, type ContentBlock, type ConverseMessage } from './wire.ts';

export interface ConvertedMessages {
  system: ContentBlock[];
  messages: ConverseMessage[];
}

/**
 * OpenAI chat messages as Converse's `system` blocks and alternating user/assistant turns:
 * system and developer messages go to `system`, tool results become `toolResult` blocks of a
 * user turn, assistant tool calls `toolUse` blocks; consecutive turns of one role are merged.
 */
export function convertMessages(input: readonly unknown[], provider: string): ConvertedMessages {
  const system: ContentBlock[] = [];
  const messages: ConverseMessage[] = [];
  input.forEach((message: unknown, index) => {
    const param = `messages[${index}]`;
    if (!isRecord(message)) throw malformed(`${param} must be a message object`, param);
    const role = message['role'];
    if (role === 'system' || role === 'developer') {
      system.push(...convertContent(message['content'], `${param}.content`, provider));
      return;
    }
    if (role === 'user') return append(messages, 'user', convertContent(message['content'], `${param}.content`, provider));
    if (role === 'assistant') return append(messages, 'assistant', assistantBlocks(message, param, provider));
    if (role === 'tool') return append(messages, 'user', [toolResult(message, param, provider)]);
    throw malformed(`${param}.role must be system, developer, user, assistant or tool`, `${param}.role`);
  });
  return { system, messages };
}

function append(messages: ConverseMessage[], role: 'user' | 'assistant', content: ContentBlock[]): void {
  if (content.length === 0) return;
  const last = messages.at(-1);
  if (last !== undefined && last.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

function assistantBlocks(message: Record<string, unknown>, param: string, provider: string): ContentBlock[] {
  const blocks = convertContent(message['content'], `${param}.content`, provider);
  const calls = message['tool_calls'];
  if (calls === undefined || calls === null) return blocks;
  if (!Array.isArray(calls)) throw malformed(`${param}.tool_calls must be an array`, `${param}.tool_calls`);
  calls.forEach((call: unknown, index) => blocks.push(toolUse(call, `${param}.tool_calls[${index}]`)));
  return blocks;
}

function toolUse(call: unknown, param: string): ContentBlock {
  const fn = isRecord(call) ? call['function'] : undefined;
  if (!isRecord(call) || typeof call['id'] !== 'string' || !isRecord(fn) || typeof fn['name'] !== 'string') {
    throw malformed(`${param} must have an id and a function name`, param);
  }
  const args = fn['arguments'];
  let input: unknown = {};
  if (typeof args === 'string' && args.trim() !== '') {
    try {
      input = JSON.parse(args);
    } catch {
      throw malformed(`${param}.function.arguments must be JSON`, `${param}.function.arguments`);
    }
  }
  return { toolUse: { toolUseId: call['id'], name: fn['name'], input: isRecord(input) ? input : { value: input } } };
}

function toolResult(message: Record<string, unknown>, param: string, provider: string): ContentBlock {
  const id = message['tool_call_id'];
  if (typeof id !== 'string') throw malformed(`${param}.tool_call_id must be a string`, `${param}.tool_call_id`);
  const content = convertContent(message['content'], `${param}.content`, provider).filter((block) => block.cachePoint === undefined);
  return { toolResult: { toolUseId: id, content: content.length > 0 ? content : [{ text: '' }] } };
}
