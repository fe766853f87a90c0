import { systemText, toChatMessages } from './convert-contents.ts';
import { toJsonSchema } from './convert-schema.ts';
import { field, invalid, isObject, type JsonObject } from './wire.ts';

/** `generationConfig` fields with a direct OpenAI equivalent. */
const sameMeaning: ReadonlyArray<[string, string]> = [
  ['temperature', 'temperature'],
  ['topP', 'top_p'],
  ['maxOutputTokens', 'max_tokens'],
  ['candidateCount', 'n'],
  ['seed', 'seed'],
  ['presencePenalty', 'presence_penalty'],
  ['frequencyPenalty', 'frequency_penalty'],
];

/**
 * A Gemini `GenerateContentRequest` as an OpenAI chat completions request for the chat
 * pipeline (`model` is the gateway selector from the URL). Mapped: `contents`,
 * `systemInstruction`, function declarations and `toolConfig`, and `generationConfig`
 * (sampling, stop sequences, JSON mode and schemas, thinking budget or level as
 * `reasoning_effort`). Accepted and dropped, having no OpenAI equivalent: `safetySettings`,
 * `topK`, `cachedContent`, `labels`. Tools other than functions (Google Search, code
 * execution, URL context) are refused: dropping them would change the answer silently.
 */
export function toChatRequest(input: unknown, selector: string, stream: boolean): JsonObject {
  if (!isObject(input)) throw invalid('request body must be a JSON object');
  const messages = toChatMessages(field(input, 'contents'));
  const system = systemText(field(input, 'systemInstruction'));
  const chat: JsonObject = { model: selector, messages: system === null ? messages : [{ role: 'system', content: system }, ...messages] };
  Object.assign(chat, generationOf(field(input, 'generationConfig')), toolsOf(input['tools'], field(input, 'toolConfig')));
  if (stream) {
    chat['stream'] = true;
    chat['stream_options'] = { include_usage: true };
  }
  return chat;
}

function generationOf(config: unknown): JsonObject {
  if (config === undefined || config === null) return {};
  if (!isObject(config)) throw invalid('generationConfig: must be an object', 'generationConfig');
  const chat: JsonObject = {};
  for (const [gemini, openai] of sameMeaning) {
    const value = field(config, gemini);
    if (value !== undefined && value !== null) chat[openai] = value;
  }
  const stop = field(config, 'stopSequences');
  if (Array.isArray(stop) && stop.length > 0) chat['stop'] = stop;
  const format = responseFormatOf(config);
  if (format !== null) chat['response_format'] = format;
  const effort = effortOf(field(config, 'thinkingConfig'));
  if (effort !== null) chat['reasoning_effort'] = effort;
  return chat;
}

/** `responseMimeType: application/json` is JSON mode; with a schema, structured output. */
function responseFormatOf(config: JsonObject): JsonObject | null {
  const jsonSchema = field(config, 'responseJsonSchema');
  const schema = isObject(jsonSchema) ? jsonSchema : toJsonSchema(field(config, 'responseSchema'));
  if (isObject(schema)) return { type: 'json_schema', json_schema: { name: 'response', schema } };
  return field(config, 'responseMimeType') === 'application/json' ? { type: 'json_object' } : null;
}

/**
 * Thinking as OpenAI's `reasoning_effort`: `thinkingLevel` by name, `thinkingBudget` by size
 * (0 turns thinking off and sends nothing; -1, dynamic, is `medium`).
 */
function effortOf(thinking: unknown): string | null {
  if (!isObject(thinking)) return null;
  const level = field(thinking, 'thinkingLevel');
  if (typeof level === 'string' && level !== '' && level !== 'THINKING_LEVEL_UNSPECIFIED') return level.toLowerCase();
  const budget = field(thinking, 'thinkingBudget');
  if (typeof budget !== 'number' || budget === 0) return null;
  if (budget < 0) return 'medium';
  return budget <= 4096 ? 'low' : budget <= 16384 ? 'medium' : 'high';
}

function toolsOf(tools: unknown, toolConfig: unknown): JsonObject {
  const result: JsonObject = {};
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) throw invalid('tools: must be an array', 'tools');
    const functions = tools.flatMap((tool: unknown, index) => functionsOf(tool, `tools[${index}]`));
    if (functions.length > 0) result['tools'] = functions;
  }
  const choice = toolChoiceOf(toolConfig);
  if (choice !== null) result['tool_choice'] = choice;
  return result;
}

function functionsOf(tool: unknown, path: string): JsonObject[] {
  if (!isObject(tool)) throw invalid(`${path}: must be an object`, 'tools');
  const declarations = field(tool, 'functionDeclarations');
  const others = Object.keys(tool).filter((key) => key !== 'functionDeclarations' && key !== 'function_declarations');
  if (others.length > 0) throw invalid(`${path}.${others[0]}: only functionDeclarations tools are supported by this gateway`, 'tools');
  if (declarations === undefined) return [];
  if (!Array.isArray(declarations)) throw invalid(`${path}.functionDeclarations: must be an array`, 'tools');
  return declarations.map((declaration: unknown, index) => functionTool(declaration, `${path}.functionDeclarations[${index}]`));
}

function functionTool(declaration: unknown, path: string): JsonObject {
  if (!isObject(declaration) || typeof declaration['name'] !== 'string' || declaration['name'] === '') {
    throw invalid(`${path}: must be an object with a name`, 'tools');
  }
  const jsonSchema = field(declaration, 'parametersJsonSchema');
  const schema = jsonSchema ?? toJsonSchema(declaration['parameters']);
  const fn: JsonObject = { name: declaration['name'], parameters: isObject(schema) ? schema : { type: 'object', properties: {} } };
  if (typeof declaration['description'] === 'string') fn['description'] = declaration['description'];
  return { type: 'function', function: fn };
}

/** `functionCallingConfig.mode`: AUTO, ANY (one allowed name: that function), NONE. */
function toolChoiceOf(toolConfig: unknown): unknown {
  const config = isObject(toolConfig) ? field(toolConfig, 'functionCallingConfig') : undefined;
  if (!isObject(config)) return null;
  const allowed = field(config, 'allowedFunctionNames');
  switch (config['mode']) {
    case 'ANY':
      if (Array.isArray(allowed) && allowed.length === 1 && typeof allowed[0] === 'string') {
        return { type: 'function', function: { name: allowed[0] } };
      }
      return 'required';
    case 'NONE':
      return 'none';
    case 'AUTO':
    case 'VALIDATED':
      return 'auto';
    default:
      return null;
  }
}
