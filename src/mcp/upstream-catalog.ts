import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Prompt, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';

/** What one upstream server offers, as last listed. Sorted by name (tools, prompts), URI or template. */
export interface UpstreamCatalog {
  readonly tools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly templates: readonly ResourceTemplate[];
  /** The server's `instructions` from initialize, or `''`. */
  readonly instructions: string;
}

export const emptyCatalog: UpstreamCatalog = Object.freeze({ tools: [], prompts: [], resources: [], templates: [], instructions: '' });

/** Pages followed per list at most: a server that keeps handing out cursors cannot keep us busy. */
const maxPages = 100;

/**
 * Lists everything a connected server advertises (only the lists its capabilities announce), every
 * page of each. Tools without a name are dropped; a missing or non-object input schema becomes an
 * open object schema, so downstream clients that validate schemas accept the tool.
 */
export async function listCatalog(client: Client, timeoutMs: number): Promise<UpstreamCatalog> {
  const capabilities = client.getServerCapabilities() ?? {};
  const options = { timeout: timeoutMs };
  const tools = capabilities.tools
    ? await allPages(
        (cursor) => client.listTools(cursor === undefined ? {} : { cursor }, options),
        (page) => page.tools,
      )
    : [];
  const prompts = capabilities.prompts
    ? await allPages(
        (cursor) => client.listPrompts(cursor === undefined ? {} : { cursor }, options),
        (page) => page.prompts,
      )
    : [];
  const resources = capabilities.resources
    ? await allPages(
        (cursor) => client.listResources(cursor === undefined ? {} : { cursor }, options),
        (page) => page.resources,
      )
    : [];
  const templates = capabilities.resources
    ? await allPages(
        (cursor) => client.listResourceTemplates(cursor === undefined ? {} : { cursor }, options),
        (page) => page.resourceTemplates,
      ).catch(() => [])
    : [];
  return {
    tools: tools
      .filter((tool) => typeof tool.name === 'string' && tool.name !== '')
      .map(normaliseTool)
      .sort(byKey((tool) => tool.name)),
    prompts: [...prompts].sort(byKey((prompt) => prompt.name)),
    resources: [...resources].sort(byKey((resource) => resource.uri)),
    templates: [...templates].sort(byKey((template) => template.uriTemplate)),
    instructions: client.getInstructions() ?? '',
  };
}

async function allPages<Page extends { nextCursor?: string | undefined }, Item>(
  fetchPage: (cursor: string | undefined) => Promise<Page>,
  itemsOf: (page: Page) => readonly Item[],
): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page += 1) {
    const result = await fetchPage(cursor);
    items.push(...itemsOf(result));
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === '') break;
  }
  return items;
}

function normaliseTool(tool: Tool): Tool {
  const schema: unknown = tool.inputSchema;
  const isObjectSchema = typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object';
  const inputSchema = isObjectSchema ? tool.inputSchema : { type: 'object' as const, additionalProperties: true };
  const output: unknown = tool.outputSchema;
  const keepOutput = typeof output === 'object' && output !== null && (output as { type?: unknown }).type === 'object';
  const { outputSchema: _dropped, ...rest } = tool;
  return keepOutput ? { ...rest, inputSchema, outputSchema: tool.outputSchema } : { ...rest, inputSchema };
}

function byKey<Item>(key: (item: Item) => string): (left: Item, right: Item) => number {
  return (left, right) => {
    const a = key(left);
    const b = key(right);
    return a < b ? -1 : a > b ? 1 : 0;
  };
}

export type CatalogList = 'tools' | 'prompts' | 'resources';

/** The lists that differ between two listings (resource templates count as resources). */
export function changedLists(before: UpstreamCatalog, after: UpstreamCatalog): CatalogList[] {
  const same = (left: unknown, right: unknown) => JSON.stringify(left) === JSON.stringify(right);
  const lists: CatalogList[] = [];
  if (!same(before.tools, after.tools)) lists.push('tools');
  if (!same(before.prompts, after.prompts)) lists.push('prompts');
  if (!same(before.resources, after.resources) || !same(before.templates, after.templates)) lists.push('resources');
  return lists;
}
