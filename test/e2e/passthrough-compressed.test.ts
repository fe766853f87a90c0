import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';

import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { usageOf } from '../support/admin.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';

// Real providers compress JSON for clients that accept it, and the official client (fetch)
// always says it does: the passthrough relays the compressed bytes and still reads the usage.

const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };

describe('passthrough with a compressing upstream', () => {
  let upstream: Server;
  let gateway: GatewayProcess;
  const encodings: string[] = [];

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      request.resume();
      const accepted = String(request.headers['accept-encoding'] ?? '');
      encodings.push(accepted);
      const body = Buffer.from(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop', logprobs: null }],
          usage,
        }),
      );
      const encoding = accepted.includes('br') ? 'br' : accepted.includes('gzip') ? 'gzip' : 'identity';
      const encoded = encoding === 'br' ? brotliCompressSync(body) : encoding === 'gzip' ? gzipSync(body) : body;
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': encoded.length });
      response.end(encoded);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
    gateway = await startGateway({
      env: { MASTER_KEY },
      configYaml: `providers:\n  openai:\n    type: openai\n    api_key: sk-up\n    base_url: ${base}\n    models: [m]\n`,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('records the usage of a gzip or brotli JSON answer the official client reads', async () => {
    for (const [userPath, encoding] of [
      ['/pt-gzip', 'gzip, deflate'],
      ['/pt-br', 'br, gzip, deflate'],
    ] as const) {
      const client = new OpenAI({
        baseURL: `${gateway.url}/p/openai`,
        apiKey: MASTER_KEY,
        maxRetries: 0,
        defaultHeaders: { 'x-user-path': userPath, 'accept-encoding': encoding },
      });
      const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(completion.usage).toEqual(usage);
      const row = await usageOf(gateway, userPath);
      expect(row?.requests).toBe(1);
      expect(row?.prompt_tokens, encoding).toBe(usage.prompt_tokens);
      expect(row?.completion_tokens).toBe(usage.completion_tokens);
    }
    expect(encodings.some((accepted) => accepted.includes('gzip'))).toBe(true);
  });
});
