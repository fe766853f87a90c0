import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGuardrails } from './guardrail-settings.ts';
import { buildGuardrail } from './build.ts';
import type { RequestGuardrail } from './types.ts';

type Handler = (body: string, request: IncomingMessage, response: ServerResponse) => void;

describe('webhook guardrail', () => {
  let server: Server;
  let url: string;
  let handler: Handler = (_body, _request, response) => response.end('{"action":"pass"}');
  const seen: Array<{ body: string; signature: string | undefined }> = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += String(chunk)));
      request.on('end', () => {
        seen.push({ body, signature: request.headers['x-guardrail-signature'] as string | undefined });
        handler(body, request, response);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/check`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  const hook = (extra: Record<string, unknown> = {}): RequestGuardrail => {
    const guardrail = buildGuardrail(
      buildGuardrails([{ name: 'hook', type: 'webhook', url, secret: 's3cret', timeout_ms: 200, ...extra }])[0]!,
    );
    if (guardrail.kind !== 'request') throw new Error('expected a request guardrail');
    return guardrail;
  };
  const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

  it('posts the request signed with HMAC-SHA256 and passes or blocks as told', async () => {
    seen.length = 0;
    handler = (_body, _request, response) => response.end('{"action":"pass"}');
    await expect(hook().check(body)).resolves.toBeNull();
    const sent = seen[0]!;
    expect(JSON.parse(sent.body)).toEqual({ guardrail: 'hook', stage: 'input', request: body });
    expect(sent.signature).toBe(`sha256=${createHmac('sha256', 's3cret').update(sent.body).digest('hex')}`);
    handler = (_body, _request, response) => response.end('{"action":"block","reason":"off\\ntopic"}');
    await expect(hook().check(body)).resolves.toBe('off topic');
  });

  it('retries failures, then fails closed, or open when fail_open is set', async () => {
    seen.length = 0;
    handler = (_body, _request, response) => {
      response.statusCode = 500;
      response.end();
    };
    await expect(hook({ retries: 2 }).check(body)).resolves.toMatch(/did not answer/);
    expect(seen).toHaveLength(3);
    await expect(hook({ retries: 0, fail_open: true }).check(body)).resolves.toBeNull();
  });

  it('times out a hook that does not answer', async () => {
    handler = () => undefined; // never answers
    const started = performance.now();
    await expect(hook({ retries: 0, timeout_ms: 100 }).check(body)).resolves.toMatch(/did not answer/);
    expect(performance.now() - started).toBeLessThan(2000);
    handler = (_body, _request, response) => response.end('{"action":"maybe"}');
    await expect(hook({ retries: 0, fail_open: true }).check(body)).resolves.toBeNull();
  });
});

describe('custom guardrail', () => {
  it('loads a module relative to the configuration file and applies its finds', async () => {
    const { resolve } = await import('node:path');
    const { Guardrails } = await import('./pipeline.ts');
    const pino = (await import('pino')).default;
    const configFile = resolve(import.meta.dirname, '../../config.yaml');
    const settings = buildGuardrails(
      [{ name: 'emp', type: 'custom', module: './examples/guardrails/employee-ids.mjs', action: 'redact' }],
      configFile,
    );
    const guard = (await Guardrails.create(settings, pino({ level: 'silent' })))!.select('/', 'm', '/v1/chat/completions', {
      requestId: 'r',
    })!;
    const out = await guard.input({ model: 'm', messages: [{ role: 'user', content: 'ask EMP-004211 and EMP-1' }] });
    expect(out.messages).toEqual([{ role: 'user', content: 'ask [REDACTED_EMPLOYEE_ID] and EMP-1' }]);
  });

  it('fails at start-up on a missing module or one without find', async () => {
    expect(() => buildGuardrails([{ name: 'x', type: 'custom', module: '/nonexistent/guard.mjs' }])).toThrow(
      /guardrails\.0\.module: file not found/,
    );
    const { Guardrails } = await import('./pipeline.ts');
    const { resolve } = await import('node:path');
    const pino = (await import('pino')).default;
    const settings = buildGuardrails([{ name: 'x', type: 'custom', module: resolve(import.meta.dirname, 'types.ts') }]);
    await expect(Guardrails.create(settings, pino({ level: 'silent' }))).rejects.toThrow(/guardrail "x": .* exports no find/);
  });
});

describe('json_schema guardrail', () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer' }, tags: { type: 'array', items: { enum: ['a', 'b'] } } },
    required: ['name'],
    additionalProperties: false,
  };
  const request = { model: 'm', messages: [], response_format: { type: 'json_schema', json_schema: { name: 'p', schema } } };
  const answer = (content: string): string => JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content } }] });

  it('blocks an answer that does not match the schema the request asked for, and passes one that does', async () => {
    const { Guardrails } = await import('./pipeline.ts');
    const pino = (await import('pino')).default;
    const guardrails = (await Guardrails.create(buildGuardrails([{ name: 'shape', type: 'json_schema' }]), pino({ level: 'silent' })))!;
    const guard = guardrails.select('/', 'm', '/v1/chat/completions', { requestId: 'r' })!;
    await guard.input(request);
    const good = answer('{"name":"x","age":3,"tags":["a"]}');
    expect(guard.output(good)).toBe(good);
    expect(() => guard.output(answer('{"name":"x","age":3.5}'))).toThrow(
      /guardrail "shape" blocked the answer: .*\$\.age: expected integer/,
    );
    expect(() => guard.output(answer('{"age":3}'))).toThrow(/missing required property "name"/);
    expect(() => guard.output(answer('{"name":"x","extra":1}'))).toThrow(/unexpected property "extra"/);
    expect(() => guard.output(answer('{"name":"x","tags":["c"]}'))).toThrow(/\$\.tags\[0\]: not one of the enum values/);
    expect(() => guard.output(answer('not json'))).toThrow(/not JSON/);
    const free = guardrails.select('/', 'm', '/v1/chat/completions', { requestId: 'r' })!;
    await free.input({ model: 'm', messages: [] });
    expect(free.output(answer('not json'))).toBe(answer('not json'));
  });
});
