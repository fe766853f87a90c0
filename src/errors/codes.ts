/**
 * Registry of every `error.code` the gateway emits. docs/errors.md lists the same codes; a
 * test fails when the two disagree.
 */
export const errorCodes = {
  invalid_json: 'The request body is not valid JSON.',
  invalid_body: 'The request body is not a JSON object, or a field has the wrong type.',
  missing_field: 'A required field is missing.',
  body_too_large: 'The request body is larger than BODY_SIZE_LIMIT (status 413).',
  invalid_user_path: 'The user-path header is not a valid path.',
  unknown_provider: 'The `provider` routing hint names no configured instance.',
  model_not_found: 'No configured instance serves the requested model.',
  unknown_route: 'No route matches the method and path.',
  missing_credentials: 'No `Authorization: Bearer` or `x-api-key` credential was sent.',
  invalid_credentials: 'The credential is not the master key nor an active API key.',
  admin_required: 'The route needs the master key; API keys cannot call it.',
  upstream_error: 'The upstream provider answered with an error; its message is kept.',
  upstream_unreachable: 'The upstream provider could not be reached.',
  upstream_timeout: 'The upstream provider did not answer in time (status 504).',
  invalid_upstream_response: 'The upstream provider answered with a body the gateway cannot read.',
  client_closed_request: 'The client went away before the answer; the upstream call was cancelled (status 499, logged only).',
  invalid_parameter: 'A query parameter or admin field has a wrong value; `param` names it.',
  unsupported_parameter: 'A field or content part the serving provider cannot honour; `param` names it.',
  feature_unavailable: 'The feature behind this admin route is switched off (status 503).',
  storage_unavailable: 'The database did not answer (status 503).',
  budget_exceeded: 'The user path has spent its budget for the period (status 429, provider `budget`).',
  budget_not_found: 'No budget rule has that user path and period.',
  budget_read_only: 'The budget rule comes from configuration and cannot be changed through the API (status 409).',
  api_key_not_found: 'No API key has that id.',
  rate_limit_exceeded: 'A rate-limit rule matching the request is exhausted (status 429, provider `ratelimit`).',
  rate_limit_not_found: 'No rate-limit rule has that scope, subject and period.',
  rule_read_only: 'The rate-limit rule comes from configuration and cannot be changed through the API (status 409).',
  rate_limit_store_unavailable: 'The shared rate-limit counter store did not answer and the fail mode is closed (status 503).',
  virtual_model_not_found: 'No virtual model has that name.',
  virtual_model_read_only: 'The virtual model comes from configuration and cannot be changed through the API (status 409).',
  circuit_open: 'Every target of the request has an open circuit breaker after repeated upstream failures (status 503).',
  shutting_down: 'The gateway is shutting down and takes no new requests (status 503).',
} as const;

export type ErrorCode = keyof typeof errorCodes;
