import { invalidRequest } from '../../errors/gateway-error.ts';
import { convertMessages } from './convert-contents.ts';
import { cleanSchema } from './convert-schema.ts';
import { isRecord, text, type GenerateContentRequest, type Json } from './wire.ts';

/**
 * OpenAI `reasoning_effort` as Gemini's thinking budget (tokens), the mapping Google's own
 * OpenAI-compatible endpoint uses: low 1K, medium 8K, high 24K, `none` turns thinking off.
 * `minimal` is taken as `low` (Gemini 2.5 Pro cannot think less than 128 tokens) and
 * `xhigh` as `high` (24K is the largest budget every 2.5 model takes).
 */
export const thinkingBudgets: Readonly<Record<string, number>> = {
  none: 0,
  minimal: 1024,
  low: 1024,
  medium: 8192,
  high: 24576,
  xhigh: 24576,
};

/**
 * An OpenAI chat completions request as Gemini's `GenerateContentRequest` (the model and
 * `stream` go in the URL, not the body). Pure; throws a 400 GatewayError for input Gemini
 * cannot take. Extra fields Google's OpenAI-compatible API reads under `google`
 * (`thinking_config`, `safety_settings`, `cached_content`) are honoured too.
 */
export function toGenerateContentRequest(chat: Json): GenerateContentRequest {
  const { contents, systemInstruction } = convertMessages(chat['messages']);
  const request: GenerateContentRequest = { contents };
  if (systemInstruction !== undefined) request.systemInstruction = systemInstruction;
  const tools = toolsOf(chat['tools']);
  if (tools !== undefined) request.tools = tools;
  const toolConfig = toolConfigOf(chat['tool_choice']);
  if (toolConfig !== undefined) request.toolConfig = toolConfig;
  const generationConfig = generationConfigOf(chat);
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig;
  const google = isRecord(chat['google']) ? chat['google'] : {};
  const safety = chat['safety_settings'] ?? google['safety_settings'];
  if (Array.isArray(safety)) request.safetySettings = safety.map(camelKeys);
  const cached = text(google['cached_content']);
  if (cached !== undefined) request.cachedContent = cached;
  return request;
}

function toolsOf(tools: unknown): Json[] | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  const declarations = tools.map((tool: unknown, index) => {
    const fn = isRecord(tool) && isRecord(tool['function']) ? tool['function'] : null;
    const name = text(fn?.['name']);
    if (fn === null || name === undefined || (isRecord(tool) && tool['type'] !== 'function')) {
      throw invalidRequest(`tools[${index}] must be a function tool with a name`, { param: `tools[${index}]`, code: 'invalid_body' });
    }
    const declaration: Json = { name };
    const description = text(fn['description']);
    if (description !== undefined) declaration['description'] = description;
    const parameters = cleanSchema(fn['parameters']);
    // A function without parameters leaves them out: an empty object schema is rejected.
    if (isRecord(parameters['properties']) && Object.keys(parameters['properties']).length > 0) declaration['parameters'] = parameters;
    return declaration;
  });
  return [{ functionDeclarations: declarations }];
}

/** `tool_choice` as `functionCallingConfig`: none -> NONE, auto -> AUTO, required -> ANY, a named function -> ANY restricted to it. */
function toolConfigOf(choice: unknown): Json | undefined {
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  const name = isRecord(choice) && isRecord(choice['function']) ? text(choice['function']['name']) : undefined;
  return name === undefined ? undefined : { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } };
}

const numeric = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

function generationConfigOf(chat: Json): Json {
  const config: Json = {};
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) config[key] = value;
  };
  set('temperature', numeric(chat['temperature']));
  set('topP', numeric(chat['top_p']));
  set('topK', numeric(chat['top_k']));
  set('maxOutputTokens', numeric(chat['max_completion_tokens']) ?? numeric(chat['max_tokens']));
  set('candidateCount', numeric(chat['n']));
  set('seed', numeric(chat['seed']));
  set('presencePenalty', numeric(chat['presence_penalty']));
  set('frequencyPenalty', numeric(chat['frequency_penalty']));
  const stop = chat['stop'];
  if (typeof stop === 'string') config['stopSequences'] = [stop];
  else if (Array.isArray(stop) && stop.length > 0) config['stopSequences'] = stop.filter((item) => typeof item === 'string');
  Object.assign(config, responseFormatOf(chat['response_format']));
  const thinking = thinkingConfigOf(chat);
  if (thinking !== undefined) config['thinkingConfig'] = thinking;
  return config;
}

/** `json_object` -> JSON MIME type; `json_schema` -> JSON MIME type and the cleaned schema. */
function responseFormatOf(format: unknown): Json {
  if (!isRecord(format)) return {};
  if (format['type'] === 'json_object') return { responseMimeType: 'application/json' };
  if (format['type'] !== 'json_schema') return {};
  const wrapper = isRecord(format['json_schema']) ? format['json_schema'] : {};
  return isRecord(wrapper['schema'])
    ? { responseMimeType: 'application/json', responseSchema: cleanSchema(wrapper['schema']) }
    : { responseMimeType: 'application/json' };
}

/**
 * `reasoning_effort` (see thinkingBudgets; any effort but `none` also asks for thought
 * summaries), overridden field by field by an explicit `thinking_config` (top level or under
 * `google`, snake_case or camelCase: `thinking_budget`, `include_thoughts`, `thinking_level`).
 */
function thinkingConfigOf(chat: Json): Json | undefined {
  const effort = text(chat['reasoning_effort']);
  const budget = effort === undefined ? undefined : thinkingBudgets[effort];
  if (effort !== undefined && budget === undefined) {
    throw invalidRequest(`reasoning_effort must be one of ${Object.keys(thinkingBudgets).join(', ')}`, {
      param: 'reasoning_effort',
      code: 'invalid_body',
    });
  }
  const fromEffort: Json =
    budget === undefined ? {} : budget === 0 ? { thinkingBudget: 0 } : { thinkingBudget: budget, includeThoughts: true };
  const google = isRecord(chat['google']) ? chat['google'] : {};
  const explicit = chat['thinking_config'] ?? google['thinking_config'];
  const merged = { ...fromEffort, ...(isRecord(explicit) ? camelKeys(explicit) : {}) };
  return Object.keys(merged).length > 0 ? merged : undefined;
}

/** `{thinking_budget: 1}` -> `{thinkingBudget: 1}` (one level deep). */
function camelKeys(value: unknown): Json {
  if (!isRecord(value)) return {};
  const out: Json = {};
  for (const [key, item] of Object.entries(value)) out[key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase())] = item;
  return out;
}
