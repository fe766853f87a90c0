import { modelAllowed, type VirtualModelNames } from '../../auth/allowlist.ts';
import { permissionError } from '../../errors/gateway-error.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import { readBody, upstreamErrorOf } from '../../providers/upstream-body.ts';
import type { RequestContext } from '../request-context.ts';
import { resourcePath } from './resources.ts';

/** Lines parsed between two turns of the event loop. */
const linesPerTurn = 1000;

/**
 * A file's content read from the instance, bounded by UPSTREAM_MAX_RESPONSE_BYTES (past it,
 * 502 `upstream_response_too_large`: nothing unbounded is read).
 */
export async function readFileContent(adapter: ProviderAdapter, context: RequestContext, fileId: string): Promise<string> {
  const response = await adapter.forward(
    { method: 'GET', path: resourcePath('files', fileId, 'content'), headers: {}, body: null },
    { signal: context.signal, requestId: context.requestId },
  );
  if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, adapter.name);
  return readBody(response, adapter.name, context.signal);
}

/**
 * Calls `each` with every JSON line of a JSONL text (blank lines skipped, unparseable lines as
 * null), yielding to the event loop every thousand lines: linear, and no long stall.
 */
export async function forEachJsonLine(text: string, each: (line: Record<string, unknown> | null, index: number) => void): Promise<void> {
  let start = 0;
  let index = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line === '') continue;
    each(parseObject(line), index);
    index += 1;
    if (index % linesPerTurn === 0) await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A batch's input file against the caller's model allowlist: every line's `body.model` must
 * be allowed on the instance the batch runs on, else 403 `model_not_allowed` before the batch
 * is created. A line whose model cannot be read is refused too (fail closed), and an allowed
 * virtual-model name opens no concrete model of that name (the upstream runs the line as is).
 */
export async function assertBatchModelsAllowed(
  adapter: ProviderAdapter,
  context: RequestContext,
  inputFileId: string,
  virtualModels: VirtualModelNames | null,
): Promise<void> {
  const allowed = context.principal.allowedModels;
  if (allowed === undefined || allowed === null) return;
  const text = await readFileContent(adapter, context, inputFileId);
  let refused: string | null = null;
  await forEachJsonLine(text, (line, index) => {
    if (refused !== null) return;
    const body = line?.['body'];
    const model = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['model'] : undefined;
    if (typeof model !== 'string' || model === '') refused = `line ${index + 1} of the batch input file names no model`;
    else if (!modelAllowed(allowed, { instance: adapter.name, model }, virtualModels))
      refused = `this credential may not use model ${adapter.name}/${model.slice(0, 256)} (line ${index + 1} of the batch input file)`;
  });
  if (refused !== null) throw permissionError(refused, { code: 'model_not_allowed', param: 'input_file_id' });
}

function parseObject(line: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
