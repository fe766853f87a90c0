import { expect } from 'vitest';

import type { MockRequest, MockUpstream } from './mock-upstream.ts';
import { decodeForm, sendJson } from './upstream.ts';

/** An in-memory Files, Batch and Responses API that knows nothing of tenants (one shared account). */
export interface SharedAccount {
  readonly files: Map<string, { meta: Record<string, unknown>; content: string }>;
  readonly batches: Map<string, Record<string, unknown>>;
  readonly responses: Map<string, Record<string, unknown>>;
  /** Every request the upstream saw, `METHOD /path`. */
  readonly calls: string[];
  /** Adds a file the gateway never saw (created before ownership was recorded). */
  addFile(id: string, content: string): void;
  /** Marks a batch completed with an output file holding `lines`. */
  complete(batchId: string, lines: Record<string, unknown>[]): string;
}

const list = (data: unknown[]) => ({
  object: 'list',
  data,
  first_id: null,
  last_id: null,
  has_more: false,
});

export function serveSharedAccount(mock: MockUpstream): SharedAccount {
  const files = new Map<string, { meta: Record<string, unknown>; content: string }>();
  const batches = new Map<string, Record<string, unknown>>();
  const responses = new Map<string, Record<string, unknown>>();
  const calls: string[] = [];
  let counter = 0;
  const next = (): number => (counter += 1);
  const note = (request: MockRequest): void => void calls.push(`${request.method} ${request.path}`);
  const addFile = (id: string, content: string, purpose = 'batch'): void =>
    void files.set(id, {
      meta: { id, object: 'file', bytes: content.length, created_at: 1_700_000_000, filename: `${id}.jsonl`, purpose },
      content,
    });
  mock.route('POST', '/files', async (request, response) => {
    note(request);
    const form = await decodeForm(request);
    const id = `file-${next()}`;
    addFile(id, await (form.get('file') as File).text(), String(form.get('purpose')));
    sendJson(response, 200, files.get(id)?.meta);
  });
  mock.route(
    'GET',
    '/files',
    (request, response) => (note(request), sendJson(response, 200, list([...files.values()].map((f) => f.meta)))),
  );
  mock.route('GET', '/files/*', (request, response) => {
    note(request);
    const [, , id, content] = request.path.split('/');
    const file = files.get(String(id));
    if (file === undefined)
      return sendJson(response, 404, { error: { message: `No such File object: ${id}`, type: 'invalid_request_error' } });
    if (content === 'content') return void response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(file.content);
    sendJson(response, 200, file.meta);
  });
  mock.route('DELETE', '/files/*', (request, response) => {
    note(request);
    const id = request.path.split('/')[2] ?? '';
    files.delete(id);
    sendJson(response, 200, { id, object: 'file', deleted: true });
  });
  mock.route('POST', '/batches', (request, response) => {
    note(request);
    const batch = { id: `batch_${next()}`, object: 'batch', status: 'validating', ...(request.body as Record<string, unknown>) };
    batches.set(batch.id, batch);
    sendJson(response, 200, batch);
  });
  mock.route('GET', '/batches', (request, response) => (note(request), sendJson(response, 200, list([...batches.values()]))));
  mock.route('GET', '/batches/*', (request, response) => {
    note(request);
    const batch = batches.get(request.path.split('/')[2] ?? '');
    if (batch === undefined) return sendJson(response, 404, { error: { message: 'No such Batch object', type: 'invalid_request_error' } });
    sendJson(response, 200, batch);
  });
  mock.route('POST', '/batches/*', (request, response) => {
    note(request);
    const batch = batches.get(request.path.split('/')[2] ?? '');
    if (batch === undefined) return sendJson(response, 404, { error: { message: 'No such Batch object', type: 'invalid_request_error' } });
    batch['status'] = 'cancelling';
    sendJson(response, 200, batch);
  });
  mock.route('POST', '/responses', (request, response) => {
    note(request);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const previous = body['previous_response_id'];
    if (typeof previous === 'string' && !responses.has(previous)) {
      return sendJson(response, 404, {
        error: { message: `Previous response with id '${previous}' not found.`, type: 'invalid_request_error' },
      });
    }
    const n = next();
    const output = [{ id: `msg_${n}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer ${n}` }] }];
    const created = {
      id: `resp_${n}`,
      object: 'response',
      status: 'completed',
      model: body['model'],
      output,
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
    };
    responses.set(created.id, created);
    sendJson(response, 200, created);
  });
  for (const method of ['GET', 'DELETE'] as const) {
    mock.route(method, '/responses/*', (request, response) => {
      note(request);
      const found = responses.get(request.path.split('/')[2] ?? '');
      if (found === undefined) return sendJson(response, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
      sendJson(response, 200, request.path.endsWith('/input_items') ? list([]) : found);
    });
  }
  return {
    files,
    batches,
    responses,
    calls,
    addFile,
    complete: (batchId, lines) => {
      const outputId = `file-out-${next()}`;
      addFile(outputId, lines.map((line) => JSON.stringify(line)).join('\n'), 'batch_output');
      Object.assign(batches.get(batchId) ?? {}, { status: 'completed', output_file_id: outputId });
      return outputId;
    },
  };
}

/** A batch input file of one request per model. */
export function batchInput(...models: string[]): string {
  return models
    .map((model, index) =>
      JSON.stringify({ custom_id: `r${index}`, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [] } }),
    )
    .join('\n');
}

/** Uploads a batch input file as the key's tenant through `/v1/files`; its id. */
export async function uploadFile(gatewayUrl: string, token: string, content: string): Promise<string> {
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([content]), 'input.jsonl');
  const response = await fetch(`${gatewayUrl}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return String((JSON.parse(text) as Record<string, unknown>)['id']);
}
