import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';

/** The refusal: 400 `guardrail_blocked` naming the guardrail and what matched, never the matched value. */
export function guardrailBlocked(name: string, what: string, stage: 'input' | 'output'): GatewayError {
  const side = stage === 'input' ? 'the request' : 'the answer';
  return invalidRequest(`guardrail "${name}" blocked ${side}: ${what}`, {
    code: 'guardrail_blocked',
    headers: { 'x-guardrail-blocked': name },
  });
}
