import { describe, expect, it } from 'vitest';
import { cacheDirectives, cacheScopeOf, canonicalJson, responseCacheKey } from './cache-key.ts';

const path = '/v1/chat/completions';
const target = 'openai/gpt-4o';

function key(body: unknown, overrides: { path?: string; target?: string } = {}): string {
  return responseCacheKey({ path: overrides.path ?? path, target: overrides.target ?? target, body });
}

describe('responseCacheKey', () => {
  it("includes the caller's scope; a global key is the same as before scopes", () => {
    const body = { model: 'gpt-4o' };
    const caller = (userPath: string, keyId: string | null) => ({ userPath, principal: { kind: 'api_key', keyId } });
    const scoped = (scope: string | null) => responseCacheKey({ path, target, body, scope });
    expect(scoped(null)).toBe(key(body));
    expect(scoped(cacheScopeOf('user_path', caller('/team/a', 'k1')))).not.toBe(scoped(cacheScopeOf('user_path', caller('/team/b', 'k1'))));
    expect(cacheScopeOf('user_path', caller('/Team/A', 'k1'))).toBe(cacheScopeOf('user_path', caller('/team/a', 'k2')));
    expect(cacheScopeOf('key', caller('/a', 'k1'))).toBe(cacheScopeOf('key', caller('/b', 'k1')));
    expect(cacheScopeOf('key', caller('/a', 'k1'))).not.toBe(cacheScopeOf('key', caller('/a', 'k2')));
    expect(cacheScopeOf('key', { userPath: '/', principal: { kind: 'jwt', keyId: null, subject: 'k1' } })).not.toBe(
      cacheScopeOf('key', caller('/', 'k1')),
    );
    const jwt = (issuer: string, subject: string) => ({ userPath: '/', principal: { kind: 'jwt', keyId: null, issuer, subject } });
    expect(cacheScopeOf('key', jwt('https://one.test/', 'alice'))).not.toBe(cacheScopeOf('key', jwt('https://two.test/', 'alice')));
    expect(cacheScopeOf('key', jwt('https://one.test/', 'alice'))).toBe(cacheScopeOf('key', jwt('https://one.test/', 'alice')));
    expect(cacheScopeOf('global', caller('/a', 'k1'))).toBeNull();
    expect(scoped(cacheScopeOf('user_path', caller('/', null)))).not.toBe(scoped(null));
  });

  it('is a hex SHA-256', () => {
    expect(key({ model: 'gpt-4o' })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores object key order', () => {
    expect(key(JSON.parse('{"a":1,"b":2}'))).toBe(key(JSON.parse('{"b":2,"a":1}')));
  });

  it('ignores key order in nested objects and objects inside arrays', () => {
    const first = { model: 'm', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', strict: true } };
    const second = { response_format: { strict: true, type: 'json_schema' }, messages: [{ content: 'hi', role: 'user' }], model: 'm' };
    expect(key(first)).toBe(key(second));
  });

  it('keeps array order significant', () => {
    const messages = [
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
    ];
    expect(key({ messages })).not.toBe(key({ messages: [...messages].reverse() }));
  });

  it('ignores the top-level provider routing hint', () => {
    const body = { model: 'gpt-4o', messages: [] };
    expect(key({ ...body, provider: 'openai' })).toBe(key(body));
    expect(key({ ...body, provider: 'azure' })).toBe(key(body));
  });

  it('keeps a provider field nested deeper in the body', () => {
    expect(key({ metadata: { provider: 'x' } })).not.toBe(key({ metadata: {} }));
  });

  it('differs by path, target and body', () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    const base = key(body);
    expect(key(body, { path: '/v1/responses' })).not.toBe(base);
    expect(key(body, { target: 'virtual:my-alias' })).not.toBe(base);
    expect(key({ ...body, temperature: 0 })).not.toBe(base);
    expect(key({ ...body, stream: true })).not.toBe(base);
  });

  it('does not let path and target run into each other', () => {
    expect(key({}, { path: '/v1/a', target: 'b/c' })).not.toBe(key({}, { path: '/v1/ab', target: '/c' }));
  });

  it('distinguishes values JSON would tell apart', () => {
    expect(key({ n: 1 })).not.toBe(key({ n: '1' }));
    expect(key({ n: null })).not.toBe(key({}));
  });
});

describe('canonicalJson', () => {
  it('sorts keys recursively and follows JSON.stringify otherwise', () => {
    expect(canonicalJson({ b: [3, { d: 1, c: undefined }], a: 'x' })).toBe('{"a":"x","b":[3,{"d":1}]}');
    expect(canonicalJson([undefined, 'é'])).toBe('[null,"é"]');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('cacheDirectives', () => {
  it('reads no-cache', () => {
    expect(cacheDirectives({ 'cache-control': 'no-cache' })).toEqual({ noCache: true, noStore: false });
  });

  it('compares names case-insensitively', () => {
    expect(cacheDirectives({ 'cache-control': 'No-Store' })).toEqual({ noCache: false, noStore: true });
    expect(cacheDirectives({ 'Cache-Control': 'NO-CACHE' })).toEqual({ noCache: true, noStore: false });
  });

  it('reads every directive in a comma list', () => {
    expect(cacheDirectives({ 'cache-control': 'max-age=0, no-cache' })).toEqual({ noCache: true, noStore: false });
    expect(cacheDirectives({ 'cache-control': 'no-cache,no-store' })).toEqual({ noCache: true, noStore: true });
  });

  it('reads every value of a repeated header', () => {
    expect(cacheDirectives({ 'cache-control': ['max-age=0', ' no-store '] })).toEqual({ noCache: false, noStore: true });
    expect(cacheDirectives({ 'cache-control': ['no-cache', 'no-store'] })).toEqual({ noCache: true, noStore: true });
  });

  it('ignores arguments and commas inside quoted arguments', () => {
    expect(cacheDirectives({ 'cache-control': 'no-cache="x"' })).toEqual({ noCache: true, noStore: false });
    expect(cacheDirectives({ 'cache-control': 'ext="a, no-store", max-age=5' })).toEqual({ noCache: false, noStore: false });
  });

  it('answers no directives without the header, for other headers or look-alike names', () => {
    const none = { noCache: false, noStore: false };
    expect(cacheDirectives({})).toEqual(none);
    expect(cacheDirectives({ 'cache-control': undefined })).toEqual(none);
    expect(cacheDirectives({ pragma: 'no-cache', 'x-cache-control': 'no-store' })).toEqual(none);
    expect(cacheDirectives({ 'cache-control': 'no-cache-please, max-age=0' })).toEqual(none);
  });
});
