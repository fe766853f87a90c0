/**
 * How a passthrough path `/p/{instance}/{rest}` reads for the allowlists (ADR 0031): its
 * segments percent-decoded, the API-version prefixes dropped, and the account-wide resource
 * it reaches, if any. Pure; whatever the instance type, every shape any provider gives such a
 * path is recognised, so that no instance is reached through a shape the checks miss.
 */

/** Leading segments that only pick an API version or flavour: `v1/files` is `files`. */
const prefixSegments = new Set(['v1', 'v1beta', 'v1alpha', 'v1beta1', 'v2', 'openai']);

/**
 * The route's segments, each percent-decoded, empty ones dropped, without its API-version
 * prefixes (`v1/`, `v1beta/`, `openai/`) or a Vertex `projects/{p}/locations/{l}/` prefix.
 * Null when a segment has a malformed escape (a path nothing can classify).
 */
export function routeSegments(rest: string): string[] | null {
  const segments: string[] = [];
  for (const raw of rest.split('?', 1)[0]?.split('/') ?? []) {
    if (raw === '') continue;
    try {
      segments.push(decodeURIComponent(raw));
    } catch {
      return null;
    }
  }
  let start = 0;
  while (start < segments.length && prefixSegments.has((segments[start] ?? '').toLowerCase())) start += 1;
  if (segments[start]?.toLowerCase() === 'projects' && segments[start + 2]?.toLowerCase() === 'locations') start += 4;
  while (start < segments.length && prefixSegments.has((segments[start] ?? '').toLowerCase())) start += 1;
  return segments.slice(start);
}

/**
 * Collections that belong to the provider account rather than to one model call, by first
 * segment (lower case), with the gateway endpoint whose allowlist entry opens them through
 * `/p`. Collections not named here but listed in `accountCollections` open with
 * `/v1/{collection}`.
 */
const resourceEndpoints: Readonly<Record<string, string>> = {
  files: '/v1/files',
  upload: '/v1/files',
  uploads: '/v1/uploads',
  batches: '/v1/batches',
  batchpredictionjobs: '/v1/batches',
  'model-invocation-job': '/v1/batches',
  'model-invocation-jobs': '/v1/batches',
  'async-invoke': '/v1/batches',
};

const accountCollections = new Set([
  ...Object.keys(resourceEndpoints),
  'fine_tuning',
  'fine-tunes',
  'fine_tunes',
  'vector_stores',
  'assistants',
  'threads',
  'containers',
  'conversations',
  'evals',
  'organization',
  'chatkit',
  'cachedcontents',
  'tunedmodels',
  'corpora',
  'operations',
  'tuningjobs',
  'datasets',
  'skills',
]);

/**
 * Account-wide paths under a model endpoint, by prefix and the least number of segments:
 * Anthropic's `messages/batches`, and what is stored upstream for the account
 * (`responses/{id}`, `chat/completions/{id}`).
 */
const storedUnder: ReadonlyArray<readonly [string[], number, string]> = [
  [['messages', 'batches'], 2, '/v1/batches'],
  [['responses'], 2, '/v1/responses'],
  [['chat', 'completions'], 3, '/v1/chat/completions'],
];

/**
 * The gateway endpoint an account-wide passthrough path is equivalent to (`files/abc` ->
 * `/v1/files`; `messages/batches` and Gemini's `:batchGenerateContent` -> `/v1/batches`;
 * `responses/{id}` -> `/v1/responses`), or null for a model call or a path that is neither.
 * An unreadable path counts as `/v1/files` would: the most closed answer.
 */
export function accountEndpointOf(rest: string): string | null {
  const segments = routeSegments(rest);
  if (segments === null) return '/v1/files';
  const lower = segments.map((segment) => segment.toLowerCase());
  const first = lower[0];
  if (first === undefined) return null;
  if (accountCollections.has(first)) return resourceEndpoints[first] ?? `/v1/${first}`;
  for (const [prefix, least, endpoint] of storedUnder) {
    if (lower.length >= least && prefix.every((segment, index) => lower[index] === segment)) return endpoint;
  }
  // Gemini batch methods (`models/{model}:batchGenerateContent`, `:asyncBatchEmbedContent`) create batch jobs.
  const batchMethod = lower.some((segment) => {
    const method = segment.slice(segment.lastIndexOf(':') + 1);
    return segment.includes(':') && method.includes('batch') && method !== 'batchembedcontents';
  });
  return batchMethod ? '/v1/batches' : null;
}
