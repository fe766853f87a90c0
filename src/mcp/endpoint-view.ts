import type { Prompt, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamCatalog } from './upstream-catalog.ts';

/** A tool as one endpoint exposes it: `name` is what clients call, `tool.name` the upstream's name. */
export interface ExposedTool {
  readonly name: string;
  readonly slug: string;
  readonly tool: Tool;
}

export interface ExposedPrompt {
  readonly name: string;
  readonly slug: string;
  /** The upstream's own name, which `prompts/get` is forwarded under. */
  readonly originalName: string;
  /** As listed: under the exposed name. */
  readonly prompt: Prompt;
}

export interface MemberCatalog {
  readonly slug: string;
  readonly catalog: UpstreamCatalog;
}

/** Everything one endpoint exposes, computed from its members' current catalogs. */
export interface EndpointView {
  readonly tools: readonly ExposedTool[];
  readonly prompts: readonly ExposedPrompt[];
  readonly resources: ReadonlyArray<{ readonly slug: string; readonly resource: Resource }>;
  readonly templates: ReadonlyArray<{ readonly slug: string; readonly template: ResourceTemplate }>;
  /** By exposed name. */
  readonly toolsByName: ReadonlyMap<string, ExposedTool>;
  readonly promptsByName: ReadonlyMap<string, ExposedPrompt>;
  /**
   * Other names a call is accepted under, when no exposed name equals them: a bare name owned by
   * exactly one member (prefixed views), or `<slug>_<name>` of a tool listed bare (bare views).
   */
  readonly aliases: ReadonlyMap<string, ExposedTool>;
  readonly promptAliases: ReadonlyMap<string, ExposedPrompt>;
  /** Bare upstream names owned by several members: calling one of them is an error that lists the choices. */
  readonly ambiguous: ReadonlyMap<string, readonly string[]>;
}

/**
 * How an endpoint names its members' tools and prompts: `own` (a pinned server), `prefixed`
 * (`<slug>_<name>`, the `/mcp` aggregate), or `bare` (a virtual server: the upstream name when one
 * member has it, `<slug>_<name>` only for names several members share; ADR 0033).
 */
export type EndpointNaming = 'own' | 'prefixed' | 'bare';

/**
 * Builds the view of an endpoint. On a name collision the first member in order keeps the name.
 * Resources and templates are never renamed: URIs are global.
 */
export function buildEndpointView(members: readonly MemberCatalog[], naming: EndpointNaming): EndpointView {
  const toolsByName = new Map<string, ExposedTool>();
  const promptsByName = new Map<string, ExposedPrompt>();
  const resourcesByUri = new Map<string, { slug: string; resource: Resource }>();
  const templatesByUri = new Map<string, { slug: string; template: ResourceTemplate }>();
  const toolOwners = ownerCounts(members.map(({ catalog }) => catalog.tools));
  const promptOwners = ownerCounts(members.map(({ catalog }) => catalog.prompts));
  const exposedName = (slug: string, name: string, owners: ReadonlyMap<string, number>) =>
    naming === 'own' || (naming === 'bare' && owners.get(name) === 1) ? name : `${slug}_${name}`;
  for (const { slug, catalog } of members) {
    for (const tool of catalog.tools) {
      const name = exposedName(slug, tool.name, toolOwners);
      if (!toolsByName.has(name)) toolsByName.set(name, { name, slug, tool });
    }
    for (const prompt of catalog.prompts) {
      const name = exposedName(slug, prompt.name, promptOwners);
      if (!promptsByName.has(name)) promptsByName.set(name, { name, slug, originalName: prompt.name, prompt: { ...prompt, name } });
    }
    for (const resource of catalog.resources) if (!resourcesByUri.has(resource.uri)) resourcesByUri.set(resource.uri, { slug, resource });
    for (const template of catalog.templates) {
      if (!templatesByUri.has(template.uriTemplate)) templatesByUri.set(template.uriTemplate, { slug, template });
    }
  }
  const tools = naming === 'own' ? { aliases: new Map(), ambiguous: new Map() } : otherNames(toolsByName, (tool) => tool.tool.name);
  const prompts =
    naming === 'own' ? { aliases: new Map(), ambiguous: new Map() } : otherNames(promptsByName, (prompt) => prompt.originalName);
  return {
    tools: [...toolsByName.values()],
    prompts: [...promptsByName.values()],
    resources: [...resourcesByUri.values()],
    templates: [...templatesByUri.values()],
    toolsByName,
    promptsByName,
    aliases: tools.aliases,
    promptAliases: prompts.aliases,
    ambiguous: tools.ambiguous,
  };
}

function ownerCounts(lists: ReadonlyArray<ReadonlyArray<{ readonly name: string }>>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const list of lists) for (const name of new Set(list.map((item) => item.name))) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

/**
 * The names a call is also accepted under: the prefixed name of an item listed bare, and the bare
 * name of an item only one member has; a bare name several members have is ambiguous.
 */
function otherNames<Item extends { readonly name: string; readonly slug: string }>(
  byName: ReadonlyMap<string, Item>,
  originalOf: (item: Item) => string,
): { aliases: Map<string, Item>; ambiguous: Map<string, string[]> } {
  const owners = new Map<string, Item[]>();
  const aliases = new Map<string, Item>();
  for (const item of byName.values()) {
    const original = originalOf(item);
    owners.set(original, [...(owners.get(original) ?? []), item]);
    const prefixed = `${item.slug}_${original}`;
    if (item.name !== prefixed && !byName.has(prefixed)) aliases.set(prefixed, item);
  }
  const ambiguous = new Map<string, string[]>();
  for (const [bare, items] of owners) {
    if (byName.has(bare)) continue;
    const only = items[0];
    if (items.length === 1 && only !== undefined) aliases.set(bare, only);
    else
      ambiguous.set(
        bare,
        items.map((item) => item.name),
      );
  }
  return { aliases, ambiguous };
}

/** The member that serves `uri`: a listed resource, else a template whose fixed prefix matches, else the only member. */
export function resourceOwner(view: EndpointView, uri: string, members: readonly string[]): string | undefined {
  const listed = view.resources.find((entry) => entry.resource.uri === uri);
  if (listed !== undefined) return listed.slug;
  const template = view.templates.find((entry) => {
    const prefix = entry.template.uriTemplate.split('{')[0] ?? '';
    return prefix !== '' && uri.startsWith(prefix);
  });
  if (template !== undefined) return template.slug;
  return members.length === 1 ? members[0] : undefined;
}
