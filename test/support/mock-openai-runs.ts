import type { ServerResponse } from 'node:http';

import type { MockRequest, MockUpstream } from './mock-upstream.ts';
import { sendJson } from './upstream.ts';

/**
 * An in-memory OpenAI account where models run behind resources (one shared account, no
 * tenants): threads and their runs (JSON or streamed as the Assistants API streams them),
 * evals and eval runs, fine-tuning jobs, videos, vector stores and their search. A run, an eval
 * run, a job or a video stays queued until the test finishes it with the usage it reports.
 */
export interface RunsAccount {
  /** Every request the upstream saw, `METHOD /path` (without `/v1`). */
  readonly calls: string[];
  /** `key` is the object's path without `/v1/` (`threads/thread_1/runs/run_2`, `fine_tuning/jobs/ftjob-3`). */
  finish(key: string, fields: Record<string, unknown>): void;
  /** The usage a streamed or continued (submit_tool_outputs) run reports when it completes. */
  readonly runUsage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

const prefixes: Record<string, string> = {
  threads: 'thread_',
  runs: 'run_',
  evals: 'eval_',
  jobs: 'ftjob-',
  videos: 'video_',
  vector_stores: 'vs_',
};

export function serveRunsAccount(mock: MockUpstream): RunsAccount {
  const objects = new Map<string, Record<string, unknown>>();
  const calls: string[] = [];
  const runUsage = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 };
  let next = 0;
  const create = (collection: string, fields: Record<string, unknown>): Record<string, unknown> => {
    next += 1;
    const id = `${prefixes[collection.split('/').at(-1) ?? ''] ?? 'obj_'}${next}`;
    const object = { id, created_at: 1_700_000_000 + next, ...fields };
    objects.set(`${collection}/${id}`, object);
    return object;
  };
  const newRun = (threadId: string, body: Record<string, unknown>): Record<string, unknown> =>
    create(`threads/${threadId}/runs`, {
      object: 'thread.run',
      thread_id: threadId,
      assistant_id: body['assistant_id'] ?? null,
      status: 'queued',
      model: typeof body['model'] === 'string' ? body['model'] : 'gpt-4o-mini',
      usage: null,
    });
  const streamRun = (response: ServerResponse, run: Record<string, unknown>, thread?: Record<string, unknown>): void => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (event: string, data: unknown): boolean => response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (thread !== undefined) send('thread.created', thread);
    send('thread.run.created', run);
    send('thread.run.step.completed', { id: 'step_1', object: 'thread.run.step', status: 'completed', usage: runUsage });
    Object.assign(run, { status: 'completed', usage: runUsage });
    send('thread.run.completed', run);
    response.end('event: done\ndata: [DONE]\n\n');
  };
  const handler = (request: MockRequest, response: ServerResponse): void => {
    const path = request.path.replace(/^\/(v1\/)?/, '');
    calls.push(`${request.method} /${path}`);
    const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
    const segments = path.split('/');
    const existing = objects.get(path);
    if (path === 'threads/runs') {
      const thread = create('threads', { object: 'thread' });
      const run = newRun(thread['id'] as string, body);
      return body['stream'] === true ? streamRun(response, run, thread) : sendJson(response, 200, run);
    }
    if (segments[0] === 'threads' && segments[2] === 'runs' && segments.length === 3 && request.method === 'POST') {
      if (!objects.has(`threads/${segments[1]}`)) return notFound(response, path);
      const run = newRun(segments[1] as string, body);
      return body['stream'] === true ? streamRun(response, run) : sendJson(response, 200, run);
    }
    if (path.endsWith('/submit_tool_outputs') || path.endsWith('/cancel')) {
      const run = objects.get(segments.slice(0, -1).join('/'));
      if (run === undefined) return notFound(response, path);
      if (path.endsWith('/cancel')) run['status'] = 'cancelled';
      else Object.assign(run, { status: 'completed', usage: runUsage });
      return sendJson(response, 200, run);
    }
    if (segments.at(-1) === 'search' && request.method === 'POST') {
      if (!objects.has(segments.slice(0, -1).join('/'))) return notFound(response, path);
      return sendJson(response, 200, {
        object: 'vector_store.search_results.page',
        search_query: [body['query']],
        data: [],
        has_more: false,
      });
    }
    if (request.method === 'GET' && existing !== undefined) return sendJson(response, 200, existing);
    if (request.method === 'GET') {
      const data = [...objects.entries()].filter(([key]) => key.startsWith(`${path}/`) && !key.slice(path.length + 1).includes('/'));
      return sendJson(response, 200, { object: 'list', data: data.map(([, value]) => value).reverse(), has_more: false });
    }
    if (request.method === 'POST' && existing !== undefined) {
      Object.assign(existing, body);
      return sendJson(response, 200, existing);
    }
    if (segments.length > 2 && !objects.has(segments.slice(0, -1).join('/'))) return notFound(response, path);
    sendJson(
      response,
      200,
      create(path, { object: objectNames[path.replace(/\/[^/]+\/runs$/, '/runs')] ?? 'object', status: 'queued', ...body }),
    );
  };
  for (const method of ['GET', 'POST']) {
    for (const collection of ['threads', 'evals', 'fine_tuning/jobs', 'videos', 'vector_stores'])
      mock.route(method, `/${collection}*`, handler);
  }
  return { calls, runUsage, finish: (key, fields) => void Object.assign(objects.get(key) ?? {}, fields) };
}

const objectNames: Record<string, string> = {
  threads: 'thread',
  evals: 'eval',
  'evals/runs': 'eval.run',
  'fine_tuning/jobs': 'fine_tuning.job',
  videos: 'video',
  vector_stores: 'vector_store',
};

function notFound(response: ServerResponse, path: string): void {
  sendJson(response, 404, { error: { message: `No such object: ${path}`, type: 'invalid_request_error' } });
}
