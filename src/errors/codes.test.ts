import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCodes } from './codes.ts';
import { renderEnvelope, toGatewayError } from './envelope.ts';
import { GatewayError, invalidRequest } from './gateway-error.ts';

describe('error code registry', () => {
  it('matches the table in docs/errors.md', () => {
    const docs = readFileSync(resolve(import.meta.dirname, '../../docs/errors.md'), 'utf8');
    const documented = [...docs.matchAll(/^\|\s*`([a-z_]+)`\s*\|/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual(Object.keys(errorCodes).sort());
  });

  it('refuses an unregistered code', () => {
    expect(() => new GatewayError('internal_error', 'x', { code: 'made_up' as never })).toThrow(/unregistered/);
  });
});

describe('envelope', () => {
  it('renders every member of CONTRACT section 4', () => {
    expect(renderEnvelope(invalidRequest('bad', { code: 'invalid_body', param: 'model' }))).toEqual({
      error: { type: 'invalid_request_error', message: 'bad', code: 'invalid_body', param: 'model', provider: 'gateway', status_code: 400 },
    });
  });

  it('maps framework errors and hides unknown ones', () => {
    expect(toGatewayError({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }).status).toBe(413);
    const hidden = toGatewayError(new Error('secret stack detail'));
    expect(hidden.status).toBe(500);
    expect(hidden.type).toBe('internal_error');
    expect(hidden.message).not.toContain('secret');
  });
});
