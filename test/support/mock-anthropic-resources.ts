import type { MockAnthropic, MockRequest } from './mock-anthropic.ts';
import { decodeForm, sendJson } from './upstream.ts';

// Anthropic's Message Batches and Files APIs, in memory, on the Anthropic mock (one shared
// account that knows nothing of tenants), in the wire format the official SDK reads.

export interface AnthropicAccount {
  readonly batches: Map<string, Record<string, unknown>>;
  readonly files: Map<string, { meta: Record<string, unknown>; content: Buffer }>;
  /** Every request the upstream saw, `METHOD /path`. */
  readonly calls: MockRequest[];
  /** Ends a batch with one succeeded result per usage given. */
  end(batchId: string, usages: { model: string; input_tokens: number; output_tokens: number }[]): void;
}

const notFound = (message: string) => ({ type: 'error', error: { type: 'not_found_error', message } });

export function serveAnthropicAccount(mock: MockAnthropic, apiKey: string): AnthropicAccount {
  const batches = new Map<string, Record<string, unknown>>();
  const results = new Map<string, string>();
  const files = new Map<string, { meta: Record<string, unknown>; content: Buffer }>();
  const calls: MockRequest[] = [];
  let counter = 0;
  const authorized = (request: MockRequest, response: Parameters<typeof sendJson>[0]): boolean => {
    calls.push(request);
    if (request.headers['x-api-key'] === apiKey && typeof request.headers['anthropic-version'] === 'string') return true;
    sendJson(response, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    return false;
  };
  const idOf = (request: MockRequest, index: number): string => decodeURIComponent(request.path.split('/')[index] ?? '');

  mock.route('POST', '/messages/batches', (request, response) => {
    if (!authorized(request, response)) return;
    counter += 1;
    const requests = (request.body as { requests: unknown[] }).requests;
    const batch = {
      id: `msgbatch_${counter}`,
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      created_at: '2026-11-29T00:00:00Z',
      expires_at: '2026-11-30T00:00:00Z',
      ended_at: null,
      archived_at: null,
      cancel_initiated_at: null,
      results_url: null,
    };
    batches.set(batch.id, batch);
    sendJson(response, 200, batch);
  });
  mock.route('GET', '/messages/batches', (request, response) => {
    if (!authorized(request, response)) return;
    const data = [...batches.values()].reverse();
    sendJson(response, 200, { data, has_more: false, first_id: data[0]?.['id'] ?? null, last_id: data.at(-1)?.['id'] ?? null });
  });
  mock.route('GET', '/messages/batches/*', (request, response) => {
    if (!authorized(request, response)) return;
    const id = idOf(request, 3);
    const batch = batches.get(id);
    if (batch === undefined) return sendJson(response, 404, notFound(`No such batch: ${id}`));
    if (request.path.endsWith('/results')) {
      response.writeHead(200, { 'content-type': 'application/binary' });
      return void response.end(results.get(id) ?? '');
    }
    sendJson(response, 200, batch);
  });
  mock.route('POST', '/messages/batches/*', (request, response) => {
    if (!authorized(request, response)) return;
    const batch = batches.get(idOf(request, 3));
    if (batch === undefined) return sendJson(response, 404, notFound('No such batch'));
    batch['processing_status'] = 'canceling';
    sendJson(response, 200, batch);
  });
  mock.route('DELETE', '/messages/batches/*', (request, response) => {
    if (!authorized(request, response)) return;
    const id = idOf(request, 3);
    if (!batches.delete(id)) return sendJson(response, 404, notFound('No such batch'));
    sendJson(response, 200, { id, type: 'message_batch_deleted' });
  });

  mock.route('POST', '/files', async (request, response) => {
    if (!authorized(request, response)) return;
    const form = await decodeForm(request);
    const file = form.get('file') as File;
    counter += 1;
    const content = Buffer.from(await file.arrayBuffer());
    const meta = {
      id: `file_${counter}`,
      type: 'file',
      filename: file.name,
      mime_type: file.type || 'application/octet-stream',
      size_bytes: content.length,
      created_at: '2026-11-29T00:00:00Z',
      downloadable: true,
    };
    files.set(meta.id, { meta, content });
    sendJson(response, 200, meta);
  });
  mock.route('GET', '/files', (request, response) => {
    if (!authorized(request, response)) return;
    const data = [...files.values()].map((file) => file.meta);
    sendJson(response, 200, { data, has_more: false, first_id: null, last_id: null, next_page: null });
  });
  mock.route('GET', '/files/*', (request, response) => {
    if (!authorized(request, response)) return;
    const id = idOf(request, 2);
    const file = files.get(id);
    if (file === undefined) return sendJson(response, 404, notFound(`File not found: ${id}`));
    if (request.path.endsWith('/content')) return void response.writeHead(200, { 'content-type': 'text/plain' }).end(file.content);
    sendJson(response, 200, file.meta);
  });
  mock.route('DELETE', '/files/*', (request, response) => {
    if (!authorized(request, response)) return;
    const id = idOf(request, 2);
    if (!files.delete(id)) return sendJson(response, 404, notFound(`File not found: ${id}`));
    sendJson(response, 200, { id, type: 'file_deleted' });
  });

  return {
    batches,
    files,
    calls,
    end(batchId, usages) {
      const batch = batches.get(batchId);
      if (batch === undefined) throw new Error(`no batch ${batchId}`);
      Object.assign(batch, {
        processing_status: 'ended',
        ended_at: '2026-11-29T01:00:00Z',
        results_url: `${mock.url}/messages/batches/${batchId}/results`,
      });
      const lines = usages.map(({ model, ...usage }, index) => ({
        custom_id: `r${index}`,
        result: {
          type: 'succeeded',
          message: {
            id: `msg_${index}`,
            type: 'message',
            role: 'assistant',
            model,
            content: [{ type: 'text', text: 'hi' }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage,
          },
        },
      }));
      results.set(batchId, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    },
  };
}
