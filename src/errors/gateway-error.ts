import { errorCodes, type ErrorCode } from './codes.ts';

/** The seven error types of SEED-SPEC "Errors". */
export const errorTypes = [
  'provider_error',
  'rate_limit_error',
  'invalid_request_error',
  'authentication_error',
  'not_found_error',
  'permission_error',
  'internal_error',
] as const;

export type ErrorType = (typeof errorTypes)[number];

const defaultStatus: Record<ErrorType, number> = {
  provider_error: 502,
  rate_limit_error: 429,
  invalid_request_error: 400,
  authentication_error: 401,
  not_found_error: 404,
  permission_error: 403,
  internal_error: 500,
};

export interface GatewayErrorOptions {
  code?: ErrorCode | null;
  param?: string | null;
  /** Instance name for upstream errors, `ratelimit`, `budget`, or `gateway` (the default). */
  provider?: string;
  status?: number;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  cause?: unknown;
  /** Names close to an unknown one (`model_not_found`); the HTTP layer appends those the caller may see to the message. */
  suggestions?: readonly string[];
}

/**
 * The one error class of the gateway. Everything that reaches a client as an error is a
 * GatewayError by the time it is rendered; `renderEnvelope` is the only place that turns it
 * into a body.
 */
export class GatewayError extends Error {
  readonly type: ErrorType;
  readonly status: number;
  readonly code: ErrorCode | null;
  readonly param: string | null;
  readonly provider: string;
  readonly headers: Record<string, string>;
  readonly suggestions: readonly string[];

  constructor(type: ErrorType, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.type = type;
    this.status = options.status ?? defaultStatus[type];
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.provider = options.provider ?? 'gateway';
    this.headers = options.headers ?? {};
    this.suggestions = options.suggestions ?? [];
    if (this.code !== null && !(this.code in errorCodes)) {
      throw new Error(`unregistered error code: ${this.code}`);
    }
  }
}

type Options = Omit<GatewayErrorOptions, 'status'> & { status?: number };

export const invalidRequest = (message: string, options: Options = {}): GatewayError =>
  new GatewayError('invalid_request_error', message, options);

export const authenticationError = (message: string, options: Options = {}): GatewayError =>
  new GatewayError('authentication_error', message, options);

export const permissionError = (message: string, options: Options = {}): GatewayError =>
  new GatewayError('permission_error', message, options);

export const notFound = (message: string, options: Options = {}): GatewayError => new GatewayError('not_found_error', message, options);

export const providerError = (message: string, options: Options = {}): GatewayError => new GatewayError('provider_error', message, options);

export const internalError = (message = 'internal error', options: Options = {}): GatewayError =>
  new GatewayError('internal_error', message, options);
