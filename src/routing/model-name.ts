import { invalidRequest } from '../errors/gateway-error.ts';

/** The longest `model` a request may name (characters); longer is 400 `model_name_too_long`. */
export const maximumModelNameLength = 256;

/**
 * Refuses a `model` longer than 256 characters with 400 `model_name_too_long`, before it is
 * planned, counted or stored. The one check every model endpoint goes through: the route
 * planner (every selector: JSON bodies, forms, Gemini paths, realtime queries), the model API's
 * body hook (so that it answers before any other field is read), and the passthrough (path
 * and body models). Anything else is left to the caller's own validation.
 */
export function assertModelNameLength(model: unknown, param = 'model'): void {
  if (typeof model !== 'string' || model.length <= maximumModelNameLength) return;
  throw invalidRequest(`model must be at most ${maximumModelNameLength} characters (got ${model.length})`, {
    code: 'model_name_too_long',
    param,
  });
}
