import { countTokens } from '../../core/tokenizer.ts';
import type { ChatPipelineDependencies } from '../pipeline-dependencies.ts';
import { bodyOnly, callCodec, runCall, type ExecutedOutcome } from '../endpoints/call-codec.ts';
import type { RequestContext } from '../request-context.ts';
import { field, invalid, isObject, type JsonObject } from '../../dialects/gemini/wire.ts';

export const countTokensEndpoint = '/v1beta/models:countTokens';
/** Counting reads no model output and costs nothing: the record carries no usage. */
const countTokensCodec = callCodec<string>(countTokensEndpoint, bodyOnly);

/** Tokens Gemini counts for an image (and the gateway for any non-text part). */
const mediaTokens = 258;

/**
 * `:countTokens` under the model pipeline (limits, budgets, a usage record without usage):
 * the gateway's estimate, `{"totalTokens": n}`, counted with a real tokenizer (o200k_base, bounded: core/tokenizer.ts)
 * over the texts, function calls and responses, system instruction and tool declarations,
 * plus a flat count per image or other media part. The body is `{contents, ...}` or
 * `{generateContentRequest: {...}}`, as Google accepts.
 */
export function runCountTokens(
  input: unknown,
  selector: string,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ExecutedOutcome<string>> {
  if (!isObject(input)) throw invalid('request body must be a JSON object');
  const wrapped = field(input, 'generateContentRequest');
  const body = isObject(wrapped) ? wrapped : input;
  if (!Array.isArray(body['contents'])) throw invalid('contents: must be an array', 'contents');
  const call = async (): Promise<string> => JSON.stringify({ totalTokens: await estimateTokens(body) });
  // Counting bills nothing: no hold (a spent budget still refuses it).
  return runCall(countTokensCodec, { selector, hint: undefined, stream: false, body: null, call }, context, dependencies);
}

export async function estimateTokens(body: JsonObject): Promise<number> {
  const texts: string[] = [];
  let fixed = 0;
  const contents = [field(body, 'systemInstruction'), ...(body['contents'] as unknown[])];
  for (const content of contents) {
    const parts = isObject(content) ? field(content, 'parts') : typeof content === 'string' ? [{ text: content }] : [];
    for (const part of Array.isArray(parts) ? parts : []) fixed += collect(part, texts);
  }
  if (Array.isArray(body['tools'])) for (const tool of body['tools']) texts.push(JSON.stringify(tool));
  return fixed + (await countTokens(texts));
}

/** Pushes the text of a part; answers the fixed count of a part that is not text. */
function collect(part: unknown, texts: string[]): number {
  if (!isObject(part)) return 0;
  if (typeof part['text'] === 'string') texts.push(part['text']);
  else if (isObject(field(part, 'functionCall')) || isObject(field(part, 'functionResponse'))) {
    texts.push(JSON.stringify(field(part, 'functionCall') ?? field(part, 'functionResponse')));
  } else return mediaTokens;
  return 0;
}
