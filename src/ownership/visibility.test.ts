import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.ts';
import type { OwnedResource } from './ownership-store.ts';
import { listingScope, mayView, ownedBy, ownerKeyIdOf, seesAll } from './visibility.ts';

const key = (boundUserPath: string, role: Principal['role'] = 'user'): Principal => ({
  kind: 'api_key',
  keyId: `key-${boundUserPath}`,
  boundUserPath,
  role,
});
const master: Principal = { kind: 'master', keyId: null, boundUserPath: null };
const jwt: Principal = { kind: 'jwt', keyId: null, boundUserPath: '/jwt/jay', subject: 'jay' };
const owner = (userPath: string): OwnedResource => ({
  kind: 'file',
  id: 'file-1',
  instance: 'openai',
  userPath,
  keyId: 'k',
  createdAt: 0,
  charged: false,
});

describe('ownership visibility', () => {
  it('shows a resource to its path and ancestors only, case-insensitively', () => {
    expect(mayView({ principal: key('/team/a'), userPath: '/team/a' }, owner('/Team/A/app'))).toBe(true);
    expect(mayView({ principal: key('/team'), userPath: '/team' }, owner('/team/a'))).toBe(true);
    expect(mayView({ principal: key('/team/b'), userPath: '/team/b' }, owner('/team/a'))).toBe(false);
    expect(mayView({ principal: key('/team/a'), userPath: '/team/a' }, owner('/team/ab'))).toBe(false);
    expect(mayView({ principal: jwt, userPath: '/jwt/jay' }, owner('/team/a'))).toBe(false);
  });

  it('shows everything, unowned ids included, to admin keys and the master key without a user path only', () => {
    expect(mayView({ principal: key('/ops', 'admin'), userPath: '/ops' }, null)).toBe(true);
    expect(mayView({ principal: master, userPath: '/' }, null)).toBe(true);
    expect(mayView({ principal: master, userPath: '/team/b' }, owner('/team/a'))).toBe(false);
    expect(mayView({ principal: key('/'), userPath: '/' }, null)).toBe(false);
    expect(mayView({ principal: key('/team/a'), userPath: '/team/a' }, null)).toBe(false);
    expect(seesAll({ principal: key('/ops', 'viewer'), userPath: '/ops' })).toBe(false);
    expect(listingScope({ principal: key('/team/a'), userPath: '/team/a' })).toBe('/team/a');
    expect(listingScope({ principal: master, userPath: '/' })).toBeNull();
  });

  it('records a JWT owner by its subject, as usage records do', () => {
    expect(ownerKeyIdOf(jwt)).toBe('jwt:jay');
    expect(ownedBy({ principal: key('/team/a'), userPath: '/team/a' }, 'batch', 'openai', 'batch_1', 5)).toEqual({
      kind: 'batch',
      id: 'batch_1',
      instance: 'openai',
      userPath: '/team/a',
      keyId: 'key-/team/a',
      createdAt: 5,
      charged: false,
    });
  });
});
