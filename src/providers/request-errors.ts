import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';

/** The 400 for a request field instances of `type` cannot honour, naming the field and the instance. */
export function unsupportedFor(type: string): (what: string, param: string, provider: string) => GatewayError {
  return (what, param, provider) =>
    invalidRequest(`${what} is not supported by provider ${provider} (${type})`, { param, code: 'unsupported_parameter' });
}

/** The 400 for a request field whose shape is wrong. */
export function malformed(message: string, param: string): GatewayError {
  return invalidRequest(message, { param, code: 'invalid_body' });
}
