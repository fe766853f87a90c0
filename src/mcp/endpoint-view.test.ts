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
    const view = buildEndpointView([member('alpha', ['add', 'echo'])], 'own');
    expect(view.tools.map((exposed) => exposed.name)).toEqual(['add', 'echo']);
    expect(view.aliases.size).toBe(0);
  });

  it('namespaces tools and prompts; the first member keeps a colliding name', () => {
    const view = buildEndpointView(
      [member('a_b', ['c'], { prompts: [{ name: 'hello' }] }), member('a', ['b_c', 'x']), member('beta', ['x', 'a_b_c'])],
      'prefixed',
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
    const view = buildEndpointView([member('alpha', ['add', 'echo', 'beta_ping']), member('beta', ['echo', 'ping'])], 'prefixed');
    expect(view.aliases.get('add')?.name).toBe('alpha_add');
    expect(view.aliases.has('ping')).toBe(true);
    expect(view.aliases.has('echo')).toBe(false);
    expect(view.ambiguous.get('echo')).toEqual(['alpha_echo', 'beta_echo']);
    // `alpha_beta_ping` owns the bare name `beta_ping`, but `beta_ping` is an exposed name already.
    expect(view.aliases.get('beta_ping')).toBeUndefined();
    expect(view.toolsByName.get('beta_ping')?.slug).toBe('beta');
  });

  it('finds the owner of a resource by URI, by template prefix, else the only member', () => {
    const view = buildEndpointView(
      [
        member('docs', [], { resources: [{ uri: 'docs://readme', name: 'readme' }] }),
        member('files', [], { templates: [{ uriTemplate: 'file:///{path}', name: 'file' }] }),
      ],
      'prefixed',
    );
    expect(resourceOwner(view, 'docs://readme', ['docs', 'files'])).toBe('docs');
    expect(resourceOwner(view, 'file:///etc/hosts', ['docs', 'files'])).toBe('files');
    expect(resourceOwner(view, 'other://x', ['docs', 'files'])).toBeUndefined();
    expect(resourceOwner(buildEndpointView([member('solo', [])], 'own'), 'other://x', ['solo'])).toBe('solo');
  });
});

describe('buildEndpointView of a virtual server (bare names)', () => {
  it('lists a name one member has bare, prefixes only names several members share, and accepts the prefixed names', () => {
    const view = buildEndpointView(
      [
        member('alpha', ['add', 'echo'], { prompts: [{ name: 'greeting' }, { name: 'intro' }] }),
        member('beta', ['echo', 'ping'], { prompts: [{ name: 'greeting' }] }),
      ],
      'bare',
    );
    expect(view.tools.map((exposed) => `${exposed.name}<-${exposed.slug}`)).toEqual([
      'add<-alpha',
      'alpha_echo<-alpha',
      'beta_echo<-beta',
      'ping<-beta',
    ]);
    expect(view.aliases.get('alpha_add')?.name).toBe('add');
    expect(view.aliases.get('beta_ping')?.name).toBe('ping');
    expect(view.ambiguous.get('echo')).toEqual(['alpha_echo', 'beta_echo']);
    expect(view.prompts.map((exposed) => [exposed.name, exposed.originalName])).toEqual([
      ['alpha_greeting', 'greeting'],
      ['intro', 'intro'],
      ['beta_greeting', 'greeting'],
    ]);
    expect(view.promptAliases.get('alpha_intro')?.name).toBe('intro');
  });
});
