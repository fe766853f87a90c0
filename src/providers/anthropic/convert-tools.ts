import { malformed, unsupported } from './convert-content.ts';
import { isRecord, type ToolChoice, type ToolDefinition } from './wire.ts';

/** OpenAI function tools as Anthropic tools: `{name, description, input_schema}`. */
export function convertTools(tools: unknown, provider: string): ToolDefinition[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw malformed('tools must be an array', 'tools');
  return tools.map((tool: unknown, index) => {
    const param = `tools[${index}]`;
    if (!isRecord(tool)) throw malformed(`${param} must be an object`, param);
    if (tool['type'] !== 'function') throw unsupported(`tool type ${JSON.stringify(tool['type'])}`, `${param}.type`, provider);
    const fn = tool['function'];
    if (!isRecord(fn) || typeof fn['name'] !== 'string' || fn['name'] === '') {
      throw malformed(`${param}.function.name must be a string`, `${param}.function.name`);
    }
    // Anthropic requires a schema; OpenAI lets a function without parameters take none.
    const schema = isRecord(fn['parameters']) ? fn['parameters'] : { type: 'object', properties: {} };
    const definition: ToolDefinition = { name: fn['name'], input_schema: schema };
    if (typeof fn['description'] === 'string' && fn['description'] !== '') definition.description = fn['description'];
    if (isRecord(tool['cache_control'])) definition.cache_control = tool['cache_control'];
    return definition;
  });
}

/**
 * OpenAI `tool_choice` (and `parallel_tool_calls: false`) as Anthropic's: `auto` -> auto,
 * `none` -> none, `required` -> any, a named function -> tool. Anthropic's own objects are
 * accepted as they are. Undefined when nothing is to be sent.
 */
export function convertToolChoice(
  choice: unknown,
  parallelToolCalls: unknown,
  hasTools: boolean,
  provider: string,
): ToolChoice | undefined {
  const converted = choice === undefined || choice === null ? undefined : readChoice(choice, provider);
  if (!hasTools) {
    if (converted === undefined || converted.type === 'auto' || converted.type === 'none') return undefined;
    throw malformed('tool_choice requires at least one tool', 'tool_choice');
  }
  if (parallelToolCalls !== false) return converted;
  const base = converted ?? { type: 'auto' as const };
  return base.type === 'none' ? base : { ...base, disable_parallel_tool_use: true };
}

function readChoice(choice: unknown, provider: string): ToolChoice {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  if (!isRecord(choice)) throw malformed('tool_choice must be auto, none, required or a named function', 'tool_choice');
  const type = choice['type'];
  if (type === 'function') {
    const fn = choice['function'];
    const name = isRecord(fn) ? fn['name'] : undefined;
    if (typeof name !== 'string' || name === '') throw malformed('tool_choice.function.name must be a string', 'tool_choice.function.name');
    return { type: 'tool', name };
  }
  if (type === 'tool' && typeof choice['name'] === 'string') return choice as ToolChoice;
  if (type === 'auto' || type === 'any' || type === 'none') return choice as ToolChoice;
  throw unsupported(`tool_choice type ${JSON.stringify(type)}`, 'tool_choice', provider);
}
