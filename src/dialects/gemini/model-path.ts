export const modelMethods = ['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent', 'batchEmbedContents'] as const;

export type ModelMethod = (typeof modelMethods)[number];

/** The `{model}` and method of `/<version>/models/{model}:<method>`; the model percent-decoded. */
export function modelMethodOf(url: string): { model: string; method: ModelMethod } | null {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const colon = path.lastIndexOf(':');
  const prefix = path.indexOf('/models/');
  if (colon === -1 || prefix === -1 || colon < prefix) return null;
  const method = modelMethods.find((name) => name === path.slice(colon + 1));
  if (method === undefined) return null;
  try {
    return { model: decodeURIComponent(path.slice(prefix + '/models/'.length, colon)), method };
  } catch {
    return null;
  }
}
