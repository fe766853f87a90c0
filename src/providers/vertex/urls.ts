/** Where a Vertex AI instance sends its calls: project, location and the origin they resolve to. */
export interface VertexLocation {
  project: string;
  location: string;
  /** `https://{location}-aiplatform.googleapis.com`, `https://aiplatform.googleapis.com` for `global`, or `base_url`'s origin. */
  origin: string;
}

/** The location when an instance names none (Vertex's most widely served region). */
export const DEFAULT_LOCATION = 'us-central1';

export type VertexPublisher = 'google' | 'anthropic';

/** The Vertex origin of a location: regional host, or the global endpoint's host. */
export function vertexOrigin(location: string): string {
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

/** Claude models are served by the `anthropic` publisher; every other model id by `google`. */
export function publisherOf(model: string): VertexPublisher {
  return model.toLowerCase().startsWith('claude') ? 'anthropic' : 'google';
}

/** `{origin}/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`. */
export function modelUrl(where: VertexLocation, publisher: VertexPublisher, model: string, method: string): URL {
  const path = [
    'v1/projects',
    encodeURIComponent(where.project),
    'locations',
    encodeURIComponent(where.location),
    'publishers',
    publisher,
    'models',
    `${encodeURIComponent(model).replaceAll('%40', '@')}:${method}`,
  ].join('/');
  return new URL(`${where.origin.replace(/\/+$/, '')}/${path}`);
}

/** Gemini's generateContent, or its SSE stream (`:streamGenerateContent?alt=sse`). */
export function geminiUrl(where: VertexLocation, model: string, stream: boolean): URL {
  return stream ? modelUrl(where, 'google', model, 'streamGenerateContent?alt=sse') : modelUrl(where, 'google', model, 'generateContent');
}

/** Claude on Vertex: `:rawPredict`, or `:streamRawPredict` for a stream. */
export function claudeUrl(where: VertexLocation, model: string, stream: boolean): URL {
  return modelUrl(where, 'anthropic', model, stream ? 'streamRawPredict' : 'rawPredict');
}
