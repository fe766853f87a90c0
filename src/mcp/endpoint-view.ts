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
  /** Bare upstream names owned by exactly one member that no exposed name shadows (namespaced views). */
  readonly bareAliases: ReadonlyMap<string, ExposedTool>;
  /** Bare upstream names owned by several members: calling one of them is an error that lists the choices. */
  readonly ambiguous: ReadonlyMap<string, readonly string[]>;
}

/**
 * Builds the view of an endpoint. A pinned server keeps its names; a virtual (or aggregate)
 * endpoint namespaces tools and prompts as `<slug>_<name>`. On a name collision the first member in
 * order keeps the name. Resources and templates are never renamed: URIs are global.
 */
export function buildEndpointView(members: readonly MemberCatalog[], namespaced: boolean): EndpointView {
  const toolsByName = new Map<string, ExposedTool>();
  const promptsByName = new Map<string, ExposedPrompt>();
  const resourcesByUri = new Map<string, { slug: string; resource: Resource }>();
  const templatesByUri = new Map<string, { slug: string; template: ResourceTemplate }>();
  const exposedName = (slug: string, name: string) => (namespaced ? `${slug}_${name}` : name);
  for (const { slug, catalog } of members) {
    for (const tool of catalog.tools) {
      const name = exposedName(slug, tool.name);
      if (!toolsByName.has(name)) toolsByName.set(name, { name, slug, tool });
    }
    for (const prompt of catalog.prompts) {
      const name = exposedName(slug, prompt.name);
      if (!promptsByName.has(name)) promptsByName.set(name, { name, slug, originalName: prompt.name, prompt: { ...prompt, name } });
    }
    for (const resource of catalog.resources) if (!resourcesByUri.has(resource.uri)) resourcesByUri.set(resource.uri, { slug, resource });
    for (const template of catalog.templates) {
      if (!templatesByUri.has(template.uriTemplate)) templatesByUri.set(template.uriTemplate, { slug, template });
    }
  }
  const { aliases, ambiguous } = namespaced ? bareNames(toolsByName) : { aliases: new Map(), ambiguous: new Map() };
  return {
    tools: [...toolsByName.values()],
    prompts: [...promptsByName.values()],
    resources: [...resourcesByUri.values()],
    templates: [...templatesByUri.values()],
    toolsByName,
    promptsByName,
    bareAliases: aliases,
    ambiguous,
  };
}

function bareNames(toolsByName: ReadonlyMap<string, ExposedTool>): {
  aliases: Map<string, ExposedTool>;
  ambiguous: Map<string, string[]>;
} {
  const owners = new Map<string, ExposedTool[]>();
  for (const exposed of toolsByName.values()) owners.set(exposed.tool.name, [...(owners.get(exposed.tool.name) ?? []), exposed]);
  const aliases = new Map<string, ExposedTool>();
  const ambiguous = new Map<string, string[]>();
  for (const [bare, tools] of owners) {
    if (toolsByName.has(bare)) continue;
    const only = tools[0];
    if (tools.length === 1 && only !== undefined) aliases.set(bare, only);
    else
      ambiguous.set(
        bare,
        tools.map((tool) => tool.name),
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
