import { describe, expect, it } from 'vitest';
import { betaSignalsOf, noBetaSignals } from './beta-signals.ts';

describe('betaSignalsOf', () => {
  it('keeps the openai-beta header and the beta query parameter alone', () => {
    expect(betaSignalsOf('responses=v1', '/v1/responses?beta=true&provider=x&other=1')).toEqual({
      headers: { 'openai-beta': 'responses=v1' },
      query: '?beta=true',
    });
    expect(betaSignalsOf(['a=v1', 'b=v2'], '/v1/responses')).toEqual({ headers: { 'openai-beta': 'a=v1, b=v2' }, query: '' });
    expect(betaSignalsOf(undefined, '/v1/responses?beta=a%26b')).toEqual({ headers: {}, query: '?beta=a%26b' });
  });

  it('is empty without either', () => {
    expect(betaSignalsOf(undefined, '/v1/responses?other=1')).toBe(noBetaSignals);
    expect(betaSignalsOf('', '/v1/responses')).toBe(noBetaSignals);
  });
});
