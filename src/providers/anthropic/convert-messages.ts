import { assertJsonDepth } from '../../core/json-depth.ts';
import { convertContent, malformed, unsupported, type InputBlock } from './convert-content.ts';
import { isRecord, type ContentBlock, type MessageParam, type TextBlock, type ToolResultBlock, type ToolUseBlock } from './wire.ts';

export interface ConvertedMessages {
  /** Every system and developer message, in order; absent when there is none. */
  system?: string | TextBlock[];
  messages: MessageParam[];
}

interface Turn {
  role: 'user' | 'assistant';
  blocks: ContentBlock[];
}

/**
 * OpenAI chat messages as Anthropic's `system` plus alternating turns: system/developer
 * messages move to `system` (wherever they stood), tool results become `tool_result` blocks
 * of a user turn, assistant `tool_calls` become `tool_use` blocks, and consecutive turns of
 * one role are merged into one.
 */
export function convertMessages(messages: readonly unknown[], provider: string): ConvertedMessages {
  const system: TextBlock[] = [];
  const turns: Turn[] = [];
  messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    if (!isRecord(message)) throw malformed(`${param} must be a message object`, param);
    const role = message['role'];
    switch (role) {
      case 'system':
      case 'developer':
        system.push(...systemBlocks(message['content'], `${param}.content`, provider));
        return;
      case 'user':
        appendTurn(turns, 'user', convertContent(message['content'], `${param}.content`, provider));
        return;
      case 'assistant':
        appendTurn(turns, 'assistant', assistantBlocks(message, param, provider));
        return;
      case 'tool':
        appendTurn(turns, 'user', [toolResult(message, param, provider)]);
        return;
      default:
        throw unsupported(`message role ${JSON.stringify(role)}`, `${param}.role`, provider);
    }
  });
  const converted: ConvertedMessages = { messages: turns.map(compactTurn) };
  const systemText = system.filter((block) => block.text !== '');
  if (systemText.length > 0) {
    // Plain text joins into one string; blocks are kept only when one carries cache_control.
    const cached = systemText.some((block) => block.cache_control !== undefined);
    converted.system = cached ? systemText : systemText.map((block) => block.text).join('\n\n');
  }
  return converted;
}

function systemBlocks(content: unknown, param: string, provider: string): TextBlock[] {
  return convertContent(content, param, provider).map((block, index) => {
    if (block.type !== 'text') throw unsupported('non-text content in a system message', `${param}[${index}]`, provider);
    return block;
  });
}

function assistantBlocks(message: Record<string, unknown>, param: string, provider: string): ContentBlock[] {
  const blocks: ContentBlock[] = convertContent(message['content'], `${param}.content`, provider).map((block, index) => {
    if (block.type !== 'text') throw unsupported('non-text content in an assistant message', `${param}.content[${index}]`, provider);
    return block;
  });
  const calls = message['tool_calls'];
  if (calls === undefined || calls === null) return blocks;
  if (!Array.isArray(calls)) throw malformed(`${param}.tool_calls must be an array`, `${param}.tool_calls`);
  calls.forEach((call: unknown, index) => blocks.push(toolUse(call, `${param}.tool_calls[${index}]`)));
  return blocks;
}

function toolUse(call: unknown, param: string): ToolUseBlock {
  const fn = isRecord(call) ? call['function'] : undefined;
  const id = isRecord(call) ? call['id'] : undefined;
  if (!isRecord(fn) || typeof id !== 'string' || typeof fn['name'] !== 'string') {
    throw malformed(`${param} must have an id and a function name`, param);
  }
  return { type: 'tool_use', id, name: fn['name'], input: toolInput(fn['arguments'], `${param}.function.arguments`) };
}

/** The JSON text of a call's arguments as an object; empty arguments are `{}`. */
function toolInput(value: unknown, param: string): Record<string, unknown> {
  if (isRecord(value)) return value;
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return {};
  if (typeof value === 'string') assertJsonDepth(value, param, param);
  let parsed: unknown;
  try {
    parsed = typeof value === 'string' ? JSON.parse(value) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!isRecord(parsed)) throw malformed(`${param} must be a JSON object`, param);
  return parsed;
}

function toolResult(message: Record<string, unknown>, param: string, provider: string): ToolResultBlock {
  const id = message['tool_call_id'];
  if (typeof id !== 'string' || id === '') throw malformed(`${param}.tool_call_id must be a string`, `${param}.tool_call_id`);
  const content = message['content'];
  if (typeof content === 'string' || content === null || content === undefined) {
    return { type: 'tool_result', tool_use_id: id, content: content ?? '' };
  }
  const blocks = convertContent(content, `${param}.content`, provider).map((block, index) => {
    if (block.type === 'document') throw unsupported('a file in a tool result', `${param}.content[${index}]`, provider);
    return block;
  });
  return { type: 'tool_result', tool_use_id: id, content: blocks };
}

/** Adds a turn, merged into the previous one when the role repeats; empty text is left out. */
function appendTurn(turns: Turn[], role: Turn['role'], blocks: ContentBlock[]): void {
  const kept = blocks.filter((block) => block.type !== 'text' || block.text !== '' || block.cache_control !== undefined);
  const previous = turns.at(-1);
  if (previous?.role === role) {
    previous.blocks.push(...kept);
    return;
  }
  // An empty assistant message says nothing; an empty user one is left for the upstream to judge.
  if (kept.length === 0 && role === 'assistant') return;
  turns.push({ role, blocks: kept.length === 0 ? [{ type: 'text', text: '' }] : kept });
}

/** A turn of one plain text block is sent as a string. */
function compactTurn(turn: Turn): MessageParam {
  const [only] = turn.blocks;
  if (turn.blocks.length === 1 && only?.type === 'text' && only.cache_control === undefined) return { role: turn.role, content: only.text };
  return { role: turn.role, content: turn.blocks as InputBlock[] | ContentBlock[] };
}
