import type { ChatRequestBody } from '../provider.ts';
import { malformed, unsupported } from './convert-content.ts';
import { convertMessages } from './convert-messages.ts';
import { isRecord, type ConverseRequest, type JsonObject } from './wire.ts';

/** Converse request fields a client may send through the common API; carried as they are. */
const nativeFields = [
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'guardrailConfig',
  'performanceConfig',
  'promptVariables',
  'requestMetadata',
] as const;

/**
 * An OpenAI chat completions request as a Converse request (the model id goes in the URL, the
 * stream choice in the path). Fields Converse has no use for (`n: 1`, `seed`, penalties,
 * `stream_options`, `user`, ...) are dropped; fields whose loss would change the answer are
 * rejected with a 400 naming them.
 */
export function convertChatRequest(body: ChatRequestBody, provider: string): ConverseRequest {
  rejectUnsupported(body, provider);
  if (!Array.isArray(body['messages'])) throw malformed('messages must be an array of messages', 'messages');
  const { system, messages } = convertMessages(body['messages'], provider);
  const request: ConverseRequest = { messages };
  if (system.length > 0) request.system = system;
  const inference = inferenceConfig(body);
  if (Object.keys(inference).length > 0) request.inferenceConfig = inference;
  const toolConfig = convertTools(body, provider);
  if (toolConfig !== undefined && (body['tool_choice'] !== 'none' || usesTools(messages))) request.toolConfig = toolConfig;
  for (const field of nativeFields) if (isRecord(body[field]) || Array.isArray(body[field])) request[field] = body[field];
  applyReasoning(body, request);
  return request;
}

/** Thinking budgets for OpenAI's `reasoning_effort` levels (tokens; Claude's minimum is 1024). */
const thinkingBudgets: Readonly<Record<string, number>> = { minimal: 1024, low: 5000, medium: 10000, high: 20000, xhigh: 32000 };

/**
 * `reasoning_effort` on an Anthropic Claude model turns on extended thinking through
 * `additionalModelRequestFields.thinking` (unless the client set it), with `maxTokens` above
 * the budget and no temperature; other models have no common switch and ignore it.
 */
function applyReasoning(body: ChatRequestBody, request: ConverseRequest): void {
  const effort = body['reasoning_effort'];
  const budget = typeof effort === 'string' ? thinkingBudgets[effort] : undefined;
  const fields = isRecord(request['additionalModelRequestFields']) ? request['additionalModelRequestFields'] : {};
  if (budget === undefined || !body.model.includes('anthropic.claude') || fields['thinking'] !== undefined) return;
  request['additionalModelRequestFields'] = { ...fields, thinking: { type: 'enabled', budget_tokens: budget } };
  const inference = { ...request.inferenceConfig };
  delete inference.temperature;
  if (inference.topP !== undefined && inference.topP < 0.95) delete inference.topP;
  inference.maxTokens = inference.maxTokens !== undefined && inference.maxTokens > budget ? inference.maxTokens : budget + 4096;
  request.inferenceConfig = inference;
}

function rejectUnsupported(body: ChatRequestBody, provider: string): void {
  const n = body['n'];
  if (n !== undefined && n !== null && n !== 1) throw unsupported('n other than 1', 'n', provider);
  if (body['logprobs'] === true) throw unsupported('logprobs', 'logprobs', provider);
  const format = body['response_format'];
  if (isRecord(format) && format['type'] !== 'text') {
    throw unsupported(`response_format type ${JSON.stringify(format['type'])}`, 'response_format.type', provider);
  }
}

function inferenceConfig(body: ChatRequestBody): NonNullable<ConverseRequest['inferenceConfig']> {
  const config: NonNullable<ConverseRequest['inferenceConfig']> = {};
  const maxTokens = maxTokensOf(body);
  if (maxTokens !== undefined) config.maxTokens = maxTokens;
  if (typeof body['temperature'] === 'number') config.temperature = Math.min(Math.max(body['temperature'], 0), 1);
  if (typeof body['top_p'] === 'number') config.topP = body['top_p'];
  const stop = body['stop'];
  if (stop !== undefined && stop !== null && typeof stop !== 'string' && !Array.isArray(stop)) {
    throw malformed('stop must be a string or an array of strings', 'stop');
  }
  const sequences = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop.filter((item) => typeof item === 'string') : [];
  if (sequences.length > 0) config.stopSequences = sequences;
  return config;
}

function maxTokensOf(body: ChatRequestBody): number | undefined {
  for (const field of ['max_completion_tokens', 'max_tokens'] as const) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw malformed(`${field} must be a positive integer`, field);
    return value;
  }
  return undefined;
}

/**
 * Converse has no `tool_choice: none`: the tools are left out, unless the conversation
 * already holds tool calls or results (Converse then needs the tool definitions).
 */
function usesTools(messages: ConverseRequest['messages']): boolean {
  return messages.some((message) => message.content.some((block) => block.toolUse !== undefined || block.toolResult !== undefined));
}

/** OpenAI function tools as `toolSpec`s; `tool_choice` as Converse's auto / any / tool. */
function convertTools(body: ChatRequestBody, provider: string): ConverseRequest['toolConfig'] {
  const tools = body['tools'];
  if (tools === undefined || tools === null) return undefined;
  if (!Array.isArray(tools)) throw malformed('tools must be an array', 'tools');
  if (tools.length === 0) return undefined;
  const specs = tools.map((tool: unknown, index) => toolSpec(tool, `tools[${index}]`, provider));
  const choice = toolChoice(body['tool_choice'], provider);
  return choice === undefined ? { tools: specs } : { tools: specs, toolChoice: choice };
}

function toolSpec(tool: unknown, param: string, provider: string): JsonObject {
  if (!isRecord(tool) || tool['type'] !== 'function') throw unsupported('tools other than functions', `${param}.type`, provider);
  const fn = tool['function'];
  if (!isRecord(fn) || typeof fn['name'] !== 'string') throw malformed(`${param}.function.name must be a string`, `${param}.function`);
  const schema = isRecord(fn['parameters']) ? fn['parameters'] : { type: 'object', properties: {} };
  const spec: JsonObject = { name: fn['name'], inputSchema: { json: schema } };
  if (typeof fn['description'] === 'string' && fn['description'] !== '') spec['description'] = fn['description'];
  return { toolSpec: spec };
}

function toolChoice(choice: unknown, provider: string): JsonObject | undefined {
  if (choice === undefined || choice === null || choice === 'none') return undefined;
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  const fn = isRecord(choice) ? choice['function'] : undefined;
  if (isRecord(fn) && typeof fn['name'] === 'string') return { tool: { name: fn['name'] } };
  throw unsupported(`tool_choice ${JSON.stringify(choice)}`, 'tool_choice', provider);
}
