import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { EndpointView, ExposedTool } from './endpoint-view.ts';
import { defaultSearchLimit, maxSearchLimit, searchTools } from './tool-search.ts';
import { exceedsJsonDepth, maximumJsonDepth } from '../core/json-depth.ts';

export const searchToolName = 'search_tools';
export const callToolName = 'call_tool';

/** The two tools a `search` session lists instead of the catalog (CONTRACT section 9). */
export function discoveryTools(view: EndpointView): Tool[] {
  const counts = new Map<string, number>();
  for (const exposed of view.tools) counts.set(exposed.slug, (counts.get(exposed.slug) ?? 0) + 1);
  const servers = [...counts].map(([slug, count]) => `${slug} (${count})`).join(', ');
  return [
    {
      name: callToolName,
      title: 'Call a tool',
      description: 'Run one of the tools found with search_tools. Pass its exact name and the arguments that match its input schema.',
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'The exact tool name returned by search_tools.' },
          arguments: { type: 'object', description: "The tool's arguments, matching its input schema.", additionalProperties: true },
        },
        required: ['name'],
      },
    },
    {
      name: searchToolName,
      title: 'Search tools',
      description:
        'Search the tools available through this gateway by keyword. Returns matching tool names, descriptions, and input schemas; run one with call_tool.' +
        (servers === '' ? '' : ` Servers: ${servers}.`),
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'Keywords describing the task, such as "create github issue", or an exact tool name.' },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: maxSearchLimit,
            description: `Maximum number of tools to return. Default ${defaultSearchLimit}.`,
          },
        },
        required: ['query'],
      },
      annotations: { title: 'Search tools', readOnlyHint: true },
    },
  ];
}

/** Runs `search_tools`: the result is one text part holding `{"tools": [...]}`; problems are tool errors. */
export function runSearchTools(view: EndpointView, input: Record<string, unknown> | undefined): CallToolResult {
  const query = input?.['query'];
  const limit = input?.['limit'];
  if (query !== undefined && typeof query !== 'string') return toolError('invalid search_tools arguments: query must be a string');
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isFinite(limit))) {
    return toolError('invalid search_tools arguments: limit must be a number');
  }
  if (query === undefined || query.trim() === '') return toolError('query is required');
  const candidates = view.tools.map((exposed) => ({
    exposed,
    name: exposed.name,
    originalName: exposed.tool.name,
    title: exposed.tool.title ?? exposed.tool.annotations?.title,
    description: exposed.tool.description,
    parameterNames: Object.keys(exposed.tool.inputSchema.properties ?? {}),
  }));
  const found = searchTools(candidates, query, limit ?? defaultSearchLimit);
  if (found.length === 0) return { content: [{ type: 'text', text: `No tools matched "${query}". Try fewer or broader keywords.` }] };
  const tools = found.map(({ exposed }) => describeTool(exposed));
  return { content: [{ type: 'text', text: JSON.stringify({ tools }) }] };
}

/**
 * The target of `call_tool` and its arguments: absent or null arguments are none; a JSON object
 * sent as a string is unwrapped; anything else passes through for the upstream to judge.
 */
export function readCallTool(input: Record<string, unknown> | undefined): { name: string; arguments: Record<string, unknown> } | string {
  const name = input?.['name'];
  if (typeof name !== 'string' || name.trim() === '') return 'invalid call_tool arguments: name is required';
  let args: unknown = input?.['arguments'];
  if (typeof args === 'string') {
    if (exceedsJsonDepth(args, maximumJsonDepth)) return `invalid call_tool arguments: nested deeper than ${maximumJsonDepth} levels`;
    try {
      const parsed: unknown = JSON.parse(args);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) args = parsed;
    } catch {
      // Not JSON: passed through as it is.
    }
  }
  if (args === undefined || args === null) return { name: name.trim(), arguments: {} };
  if (typeof args !== 'object' || Array.isArray(args)) return 'invalid call_tool arguments: arguments must be an object';
  return { name: name.trim(), arguments: args as Record<string, unknown> };
}

export function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

function describeTool(exposed: ExposedTool): Record<string, unknown> {
  const { tool } = exposed;
  return {
    name: exposed.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: tool.inputSchema,
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
  };
}
