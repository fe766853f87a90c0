import { invalidRequest, type GatewayError } from '../../errors/gateway-error.ts';
import { isObject, type JsonObject } from './wire.ts';

/**
 * Anthropic `messages` (user/assistant turns made of content blocks) as OpenAI chat
 * messages: `tool_result` blocks become `role: "tool"` messages, `tool_use` blocks become
 * `tool_calls`, images become `image_url` parts, documents text or `file` parts. Thinking
 * blocks and `cache_control` marks are dropped (no chat equivalent); block types a chat
 * upstream cannot take are a 400 naming the block.
 */
export function toChatMessages(messages: unknown): JsonObject[] {
  if (!Array.isArray(messages)) {
    const code = messages === undefined ? 'missing_field' : 'invalid_body';
    throw invalidRequest('messages: must be an array of messages', { code, param: 'messages' });
  }
  const converted: JsonObject[] = [];
  messages.forEach((message: unknown, index) => {
    const path = `messages[${index}]`;
    if (!isObject(message)) throw invalid(`${path}: must be an object`, path);
    const role = message['role'];
    if (role === 'user') converted.push(...userMessages(message['content'], path));
    else if (role === 'assistant') converted.push(assistantMessage(message['content'], path));
    else throw invalid(`${path}.role: must be "user" or "assistant"`, `${path}.role`);
  });
  return converted;
}

/** A system prompt (a string or text blocks) as the text of one system message. */
export function systemText(system: unknown): string | null {
  if (system === undefined || system === null) return null;
  if (typeof system === 'string') return system === '' ? null : system;
  if (!Array.isArray(system)) throw invalid('system: must be a string or an array of text blocks', 'system');
  const texts = system.map((block: unknown, index) => {
    if (!isObject(block) || block['type'] !== 'text' || typeof block['text'] !== 'string') {
      throw invalid(`system[${index}]: only text blocks are supported in the system prompt`, `system[${index}]`);
    }
    return block['text'];
  });
  return texts.length === 0 ? null : texts.join('\n');
}

function userMessages(content: unknown, path: string): JsonObject[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const blocks = contentBlocks(content, path);
  const toolMessages: JsonObject[] = [];
  const parts: JsonObject[] = [];
  blocks.forEach((block, index) => {
    const blockPath = `${path}.content[${index}]`;
    if (block['type'] === 'tool_result') {
      const result = toolResult(block, blockPath);
      toolMessages.push(result.message);
      parts.push(...result.images);
    } else if (block['type'] === 'text') parts.push({ type: 'text', text: textOf(block, blockPath) });
    else if (block['type'] === 'image') parts.push(imagePart(block, blockPath));
    else if (block['type'] === 'document') parts.push(documentPart(block, blockPath));
    else throw unsupportedBlock(block, blockPath);
  });
  // Tool answers must follow the assistant's tool calls directly; anything else comes after.
  if (parts.length === 0) return toolMessages;
  const only = parts.length === 1 ? parts[0] : undefined;
  const userContent = only !== undefined && only['type'] === 'text' ? only['text'] : parts;
  return [...toolMessages, { role: 'user', content: userContent }];
}

function assistantMessage(content: unknown, path: string): JsonObject {
  if (typeof content === 'string') return { role: 'assistant', content };
  let text = '';
  const toolCalls: JsonObject[] = [];
  contentBlocks(content, path).forEach((block, index) => {
    const blockPath = `${path}.content[${index}]`;
    const type = block['type'];
    if (type === 'text') text += textOf(block, blockPath);
    else if (type === 'tool_use') toolCalls.push(toolCall(block, blockPath));
    else if (type !== 'thinking' && type !== 'redacted_thinking') throw unsupportedBlock(block, blockPath);
  });
  if (toolCalls.length === 0) return { role: 'assistant', content: text };
  return { role: 'assistant', content: text === '' ? null : text, tool_calls: toolCalls };
}

function contentBlocks(content: unknown, path: string): JsonObject[] {
  if (!Array.isArray(content)) throw invalid(`${path}.content: must be a string or an array of content blocks`, `${path}.content`);
  return content.map((block: unknown, index) => {
    if (!isObject(block) || typeof block['type'] !== 'string') {
      throw invalid(`${path}.content[${index}]: must be a content block with a type`, `${path}.content[${index}]`);
    }
    return block;
  });
}

function toolCall(block: JsonObject, path: string): JsonObject {
  const { id, name } = block;
  if (typeof id !== 'string' || id === '') throw invalid(`${path}.id: must be a non-empty string`, `${path}.id`);
  if (typeof name !== 'string' || name === '') throw invalid(`${path}.name: must be a non-empty string`, `${path}.name`);
  const input = block['input'] ?? {};
  return { id, type: 'function', function: { name, arguments: JSON.stringify(input) } };
}

/** A tool_result block as a tool message; images in it go to the user message that follows. */
function toolResult(block: JsonObject, path: string): { message: JsonObject; images: JsonObject[] } {
  const toolUseId = block['tool_use_id'];
  if (typeof toolUseId !== 'string' || toolUseId === '') {
    throw invalid(`${path}.tool_use_id: must be a non-empty string`, `${path}.tool_use_id`);
  }
  const content = block['content'];
  const images: JsonObject[] = [];
  let text = '';
  if (typeof content === 'string') text = content;
  else if (content !== undefined && content !== null) {
    const texts: string[] = [];
    contentBlocks(content, path).forEach((inner, index) => {
      const innerPath = `${path}.content[${index}]`;
      if (inner['type'] === 'text') texts.push(textOf(inner, innerPath));
      else if (inner['type'] === 'image') images.push(imagePart(inner, innerPath));
      else throw unsupportedBlock(inner, innerPath);
    });
    text = texts.join('\n');
  }
  return { message: { role: 'tool', tool_call_id: toolUseId, content: text }, images };
}

function imagePart(block: JsonObject, path: string): JsonObject {
  const source = block['source'];
  if (!isObject(source)) throw invalid(`${path}.source: must be an object`, `${path}.source`);
  if (source['type'] === 'base64') {
    const { media_type: mediaType, data } = source;
    if (typeof mediaType !== 'string' || typeof data !== 'string') {
      throw invalid(`${path}.source: a base64 image needs media_type and data`, `${path}.source`);
    }
    return { type: 'image_url', image_url: { url: `data:${mediaType};base64,${data}` } };
  }
  if (source['type'] === 'url' && typeof source['url'] === 'string') return { type: 'image_url', image_url: { url: source['url'] } };
  throw invalid(`${path}.source: only base64 and url image sources are supported`, `${path}.source`);
}

/**
 * A document as chat can carry it: plain text as a text part (titled when it has a title),
 * a base64 PDF as a `file` part. Citations cannot be asked of a chat upstream and are
 * dropped; a PDF by URL or a content document is refused.
 */
function documentPart(block: JsonObject, path: string): JsonObject {
  const source = block['source'];
  if (!isObject(source)) throw invalid(`${path}.source: must be an object`, `${path}.source`);
  const title = typeof block['title'] === 'string' && block['title'] !== '' ? block['title'] : null;
  if (source['type'] === 'text' && typeof source['data'] === 'string') {
    return { type: 'text', text: title === null ? source['data'] : `${title}\n\n${source['data']}` };
  }
  if (source['type'] === 'base64' && source['media_type'] === 'application/pdf' && typeof source['data'] === 'string') {
    const file_data = `data:application/pdf;base64,${source['data']}`;
    return { type: 'file', file: { filename: title === null ? 'document.pdf' : `${title}.pdf`, file_data } };
  }
  throw invalid(`${path}.source: only text and base64 PDF documents can be sent to this provider`, `${path}.source`);
}

function textOf(block: JsonObject, path: string): string {
  const text = block['text'];
  if (typeof text !== 'string') throw invalid(`${path}.text: must be a string`, `${path}.text`);
  return text;
}

function unsupportedBlock(block: JsonObject, path: string): GatewayError {
  return invalid(`${path}: content blocks of type "${String(block['type'])}" are not supported on this endpoint`, `${path}.type`);
}

function invalid(message: string, param: string): GatewayError {
  return invalidRequest(message, { code: 'invalid_body', param });
}
