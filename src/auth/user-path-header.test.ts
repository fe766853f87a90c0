import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.ts';
import { userPathCovers } from '../core/user-path.ts';
import { normalizeUserPathOrThrow as normalizeUserPath, resolveUserPath } from './user-path-header.ts';

describe('normalizeUserPath', () => {
  it.each([
    ['team/app', '/team/app'],
    ['  /team//app/ ', '/team/app'],
    ['/', '/'],
    ['', '/'],
    ['///', '/'],
    ['/Team/App', '/Team/App'],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeUserPath(input)).toBe(expected);
  });

  it.each(['/team/../admin', '/./x', '/a:b', '/a/\u0001b'])('refuses %j with a 400', (input) => {
    const error = (() => {
      try {
        normalizeUserPath(input);
      } catch (thrown) {
        return thrown;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(400);
    expect((error as GatewayError).code).toBe('invalid_user_path');
  });
});

describe('resolveUserPath', () => {
  it('lets a key-bound path win over the header', () => {
    expect(resolveUserPath('/team/a', '/other')).toBe('/team/a');
  });

  it('uses the header, then the root', () => {
    expect(resolveUserPath(null, 'x/y')).toBe('/x/y');
    expect(resolveUserPath(null, undefined)).toBe('/');
  });
});

describe('userPathCovers', () => {
  it.each([
    ['/team', '/team', true],
    ['/team', '/team/app', true],
    ['/team', '/TEAM/App', true],
    ['/team', '/team-alpha', false],
    ['/team', '/tea', false],
    ['/', '/anything/below', true],
    ['/team/app', '/team', false],
  ])('%s covers %s: %s', (rule, request, expected) => {
    expect(userPathCovers(rule, request)).toBe(expected);
  });
});

describe('user path header bytes', () => {
  const latin1 = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

  it('decodes the header as UTF-8 (Node hands the bytes over as latin1)', () => {
    expect(resolveUserPath(null, latin1('/é'))).toBe('/é');
    expect(resolveUserPath(null, latin1('/équipe/日本/🙂'))).toBe('/équipe/日本/🙂');
    expect(resolveUserPath(null, '/plain/ascii')).toBe('/plain/ascii');
  });

  it.each([['\u00e9'], ['/\u00ff\u00fe'], ['/\u00c3']])('refuses bytes that are not UTF-8 (%j) with a 400', (value) => {
    expect(() => resolveUserPath(null, value)).toThrow(expect.objectContaining({ status: 400, code: 'invalid_user_path' }));
  });
});
