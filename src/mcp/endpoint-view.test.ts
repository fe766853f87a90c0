import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { buildEndpointView, resourceOwner, type MemberCatalog } from './endpoint-view.ts';
import { emptyCatalog } from './upstream-catalog.ts';

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });

const member = (slug: string, tools: string[], extra: Partial<MemberCatalog['catalog']> = {}): MemberCatalog => ({
  slug,
  catalog: { ...emptyCatalog, tools: tools.map(tool), ...extra },
});

describe('buildEndpointView', () => {
  it('keeps original names on a pinned endpoint, without aliases', () => {
    const view = buildEndpointView([member('alpha', ['add', 'echo'])], false);
    expect(view.tools.map((exposed) => exposed.name)).toEqual(['add', 'echo']);
    expect(view.bareAliases.size).toBe(0);
  });

  it('namespaces tools and prompts; the first member keeps a colliding name', () => {
    const view = buildEndpointView(
      [member('a_b', ['c'], { prompts: [{ name: 'hello' }] }), member('a', ['b_c', 'x']), member('beta', ['x', 'a_b_c'])],
      true,
    );
    expect(view.tools.map((exposed) => `${exposed.name}<-${exposed.slug}`)).toEqual([
      'a_b_c<-a_b',
      'a_x<-a',
      'beta_x<-beta',
      'beta_a_b_c<-beta',
    ]);
    expect(view.prompts.map((exposed) => [exposed.name, exposed.originalName, exposed.prompt.name])).toEqual([
      ['a_b_hello', 'hello', 'a_b_hello'],
    ]);
  });

  it('accepts a bare name owned by one member unless an exposed name equals it; several owners are ambiguous', () => {
    const view = buildEndpointView([member('alpha', ['add', 'echo', 'beta_ping']), member('beta', ['echo', 'ping'])], true);
    expect(view.bareAliases.get('add')?.name).toBe('alpha_add');
    expect(view.bareAliases.has('ping')).toBe(true);
    expect(view.bareAliases.has('echo')).toBe(false);
    expect(view.ambiguous.get('echo')).toEqual(['alpha_echo', 'beta_echo']);
    // `alpha_beta_ping` owns the bare name `beta_ping`, but `beta_ping` is an exposed name already.
    expect(view.bareAliases.get('beta_ping')).toBeUndefined();
    expect(view.toolsByName.get('beta_ping')?.slug).toBe('beta');
  });

  it('finds the owner of a resource by URI, by template prefix, else the only member', () => {
    const view = buildEndpointView(
      [
        member('docs', [], { resources: [{ uri: 'docs://readme', name: 'readme' }] }),
        member('files', [], { templates: [{ uriTemplate: 'file:///{path}', name: 'file' }] }),
      ],
      true,
    );
    expect(resourceOwner(view, 'docs://readme', ['docs', 'files'])).toBe('docs');
    expect(resourceOwner(view, 'file:///etc/hosts', ['docs', 'files'])).toBe('files');
    expect(resourceOwner(view, 'other://x', ['docs', 'files'])).toBeUndefined();
    expect(resourceOwner(buildEndpointView([member('solo', [])], false), 'other://x', ['solo'])).toBe('solo');
  });
});
