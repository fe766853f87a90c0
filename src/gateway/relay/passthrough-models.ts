import { routeSegments } from '../../auth/passthrough-paths.ts';
import { boundaryOf, readForm } from './multipart.ts';
import { opensLikeObject } from './passthrough.ts';

/**
 * Which models a passthrough request `/p/{instance}/{rest}` runs, read wherever the provider's
 * API carries them (ADR 0031), for the model allowlist and the model-name bound:
 * - in the path: Gemini and Vertex `models/{model}:{method}` (generateContent, countTokens,
 *   embedContent, predict, ...), Bedrock `model/{modelId}/{invoke|converse|...}`, Azure
 *   `deployments/{deployment}/...` (the models of that deployment);
 * - in the body: the `model` of a JSON body or multipart form, for the OpenAI-style model
 *   calls listed in `bodyModelRoutes`, and, when the path names a model too, as a second name
 *   to check (the path's model is what runs).
 * Anything else (another custom method, a model call whose body cannot be read, a collection)
 * is not classified: only the instance wildcard opens it.
 */
export interface PassthroughModels {
  /** Every model the request names where it decides what runs; null when that cannot be read. */
  readonly checked: readonly string[] | null;
  /** The model that runs (the path's, else the body's), for rate-limit rules and the request log. */
  readonly executed: string | undefined;
}

export interface PassthroughModelRequest {
  readonly method: string;
  /** The path after `/p/{instance}/` as sent (percent-encoded), query excluded. */
  readonly rest: string;
  readonly body: Buffer | undefined;
  readonly contentType: string | undefined;
  /** The body already parsed as a JSON object (`jsonObjectOfBody`), so it is not parsed twice. */
  readonly json?: Readonly<Record<string, unknown>> | undefined;
  /** Azure: the model ids a deployment serves (null: a deployment the instance does not map). */
  readonly deploymentModels?: ((deployment: string) => readonly string[] | null) | undefined;
}

/** OpenAI-style routes (after any `v1/`) whose POST body's `model` is the model that runs. */
const bodyModelRoutes = new Set([
  'chat/completions',
  'completions',
  'embeddings',
  'responses',
  'responses/input_tokens',
  'moderations',
  'images/generations',
  'images/edits',
  'images/variations',
  'audio/speech',
  'audio/transcriptions',
  'audio/translations',
  'messages',
  'messages/count_tokens',
  'rerank',
  'score',
]);

export function passthroughModels(request: PassthroughModelRequest): PassthroughModels {
  const segments = routeSegments(request.rest);
  const body = bodyModels(request.body, request.contentType, request.json);
  const fromBody = body ?? [];
  if (segments === null) return { checked: null, executed: fromBody[0] };
  const fromPath = pathModels(segments, request.deploymentModels);
  if (fromPath === null) return { checked: null, executed: fromBody[0] };
  if (fromPath.length > 0) return { checked: [...fromPath, ...fromBody], executed: fromPath[0] };
  const route = segments.join('/');
  if (request.method === 'POST' && bodyModelRoutes.has(route) && fromBody.length > 0) {
    return { checked: fromBody, executed: fromBody[0] };
  }
  return { checked: null, executed: fromBody[0] };
}

/** The models a path names; [] when it names none; null when it has a shape that runs a model unread. */
function pathModels(segments: readonly string[], deploymentModels: PassthroughModelRequest['deploymentModels']): readonly string[] | null {
  const models: string[] = [];
  const [first, name, operation] = segments;
  // Bedrock's model id may be an ARN (`arn:aws:bedrock:...`, sent percent-encoded).
  const bedrock = first === 'model' && name !== undefined && operation !== undefined;
  for (const [index, segment] of segments.entries()) {
    const colon = segment.indexOf(':');
    if (colon === -1 || (bedrock && index === 1)) continue;
    // A custom method (`x:generateContent`) runs the model only as `models/{model}:{method}`.
    if (segments[index - 1] !== 'models' || colon === 0) return null;
    models.push(segment.slice(0, colon));
  }
  if (bedrock) models.push(name);
  if (first === 'deployments' && name !== undefined && operation !== undefined) {
    const served = deploymentModels === undefined ? [name] : deploymentModels(name);
    if (served === null || served.length === 0) return null;
    models.push(...served);
  }
  return models;
}

/** Every `model` the body names (JSON or multipart); [] for none; null when it cannot be read. */
function bodyModels(
  body: Buffer | undefined,
  contentType: string | undefined,
  json: Readonly<Record<string, unknown>> | undefined,
): readonly string[] | null {
  if (body === undefined || body.length === 0) return [];
  const type = (contentType ?? '').toLowerCase();
  if (type.startsWith('multipart/form-data')) return formModels(body, contentType);
  if (json !== undefined) return modelsOfObject(json);
  // Upstreams read JSON whatever the content type says: a body that opens like an object is read as one.
  if (!opensLikeObject(body) && !/^application\/([\w.+-]+\+)?json\b/.test(type)) return [];
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8').replace(/^\uFEFF/, ''));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [];
    return modelsOfObject(parsed as Record<string, unknown>);
  } catch {
    return null;
  }
}

/** A JSON body's `model`: [] when it names none, null when the field is there but unreadable. */
function modelsOfObject(json: Readonly<Record<string, unknown>>): readonly string[] | null {
  if (!('model' in json)) return [];
  const model = json['model'];
  return typeof model === 'string' && model !== '' ? [model] : null;
}

function formModels(body: Buffer, contentType: string | undefined): readonly string[] | null {
  try {
    const form = readForm(body, boundaryOf(contentType));
    const parts = form.parts.filter((part) => part.name === 'model');
    if (parts.some((part) => part.filename !== null)) return null;
    return parts.map((part) => body.toString('utf8', part.contentStart, part.contentEnd));
  } catch {
    return null;
  }
}
