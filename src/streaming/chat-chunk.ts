/**
 * Per-chunk work on an OpenAI chat stream, on the JSON text of each `data:` payload. Chunks are
 * passed through with only the gateway's `provider` field appended; a chunk is parsed only when
 * it may carry usage (to read it) or already names a provider, and re-serialised only when a
 * field must go (the usage of a client that did not ask for it) or be replaced (`provider`).
 */

export type UsageObject = Record<string, unknown>;

export interface ChunkOutcome {
  /** The payload to send, or null to drop the chunk. */
  payload: string | null;
  /** The usage the chunk carried, when it carried one. */
  usage: UsageObject | null;
}

export interface ChunkOptions {
  /** The instance name stamped on every chunk. */
  provider: string;
  /** The same name JSON-encoded, e.g. `"openai"`. */
  providerJson: string;
  /** Whether the client asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
}

/** `chunkKeys` flags: a `"usage":` key with a value other than `null`. */
export const usageKey = 1;
/** `chunkKeys` flags: the text `"provider"` (a key or a value). */
export const providerKey = 2;
/** `chunkKeys` flags: a `"finish_reason":` key with a value other than `null`. */
export const finishKey = 4;

const keyPattern = /"(?:usage|finish_reason|provider)"/g;

/**
 * One search of a chunk's text for the three names the relay cares about, instead of one
 * `indexOf` each (ADR 0003: a third of the cost on this machine). Quotes inside JSON strings
 * are escaped, so `"usage":` and `"finish_reason":` can only be keys; each match restarts at
 * its closing quote, so every occurrence of each name is seen as separate searches would see it.
 */
export function chunkKeys(data: string): number {
  let flags = 0;
  keyPattern.lastIndex = 0;
  while (keyPattern.test(data)) {
    const end = keyPattern.lastIndex;
    keyPattern.lastIndex = end - 1;
    const last = data.charCodeAt(end - 2); // e: usage, n: finish_reason, r: provider
    if (last === 114) flags |= providerKey;
    else if (data.charCodeAt(end) === 58 && !nullAt(data, end + 1)) flags |= last === 101 ? usageKey : finishKey;
  }
  return flags;
}

/** Whether the value at `cursor` (after spaces) is `null`. */
function nullAt(data: string, cursor: number): boolean {
  while (data.charCodeAt(cursor) === 32) cursor += 1;
  return data.startsWith('null', cursor);
}

/** `keys` is `chunkKeys(data)`, when the caller has it already. */
export function transformChunk(data: string, options: ChunkOptions, keys?: number): ChunkOutcome {
  if (data.charCodeAt(0) !== 123) return { payload: data, usage: null }; // not an object
  if (((keys ?? chunkKeys(data)) & (usageKey | providerKey)) === 0) {
    return { payload: appendProvider(data, options.providerJson), usage: null };
  }
  let chunk: Record<string, unknown>;
  try {
    chunk = JSON.parse(data) as Record<string, unknown>;
  } catch {
    return { payload: data, usage: null };
  }
  const usage = isObject(chunk['usage']) ? chunk['usage'] : null;
  if (usage !== null && !options.includeUsage) {
    const choices = chunk['choices'];
    if (!Array.isArray(choices) || choices.length === 0) return { payload: null, usage };
    delete chunk['usage'];
  } else if (!Object.hasOwn(chunk, 'provider')) {
    // Nothing to remove or replace: the received text goes on with the name appended, as ordinary chunks do.
    return { payload: appendProvider(data, options.providerJson), usage };
  }
  chunk['provider'] = options.provider;
  return { payload: JSON.stringify(chunk), usage };
}

/**
 * Appends `"provider":<name>` to a JSON object text that has no `provider` key. Inside JSON
 * strings quotes are escaped, so the final `}` of an object text closes the object itself.
 */
export function appendProvider(json: string, providerJson: string): string {
  let end = json.length - 1;
  while (end > 0 && json.charCodeAt(end) <= 32) end -= 1;
  if (json.charCodeAt(end) !== 125) return json;
  let before = end - 1;
  while (before > 0 && json.charCodeAt(before) <= 32) before -= 1;
  const separator = json.charCodeAt(before) === 123 ? '' : ',';
  return `${json.slice(0, end)}${separator}"provider":${providerJson}}`;
}

function isObject(value: unknown): value is UsageObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
