import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openAIClient } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer, parseJson, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { sendJson } from '../support/upstream.ts';

// The official client asks for base64 embeddings unless told otherwise and decodes them.
// Many OpenAI-compatible servers (Ollama, LM Studio, Infinity, ...) ignore `encoding_format`
// and answer float arrays, which the client would decode into garbage: the gateway answers
// what the client asked for.

const vector = [0.5, -1.25, 2, 0];

describe('POST /v1/embeddings from an upstream that only answers floats', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.route('POST', '/embeddings', (_request, response) =>
      sendJson(response, 200, {
        object: 'list',
        data: [
          { object: 'embedding', index: 0, embedding: vector },
          { object: 'embedding', index: 1, embedding: vector.map((value) => value * 2) },
        ],
        model: 'embed-model',
        usage: { prompt_tokens: 4, total_tokens: 4 },
      }),
    );
    const configYaml = `providers:\n  local: { type: openai-compatible, base_url: "${mock.url}", models: [embed-model] }\n`;
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('gives the official client the vectors (it asked for base64)', async () => {
    const result = await client.embeddings.create({ model: 'embed-model', input: ['a', 'b'] });
    expect(result.data.map((item) => item.embedding)).toEqual([vector, vector.map((value) => value * 2)]);
    expect(result.usage.prompt_tokens).toBe(4);
  });

  it('keeps floats for a client that asked for floats or for nothing', async () => {
    for (const format of ['float', undefined]) {
      const reply = await rawRequest(`${gateway.url}/v1/embeddings`, {
        headers: bearer(MASTER_KEY),
        body: { model: 'embed-model', input: 'a', ...(format === undefined ? {} : { encoding_format: format }) },
      });
      expect(reply.status).toBe(200);
      const data = parseJson(reply.text)['data'] as Array<{ embedding: unknown }>;
      expect(data[0]?.embedding).toEqual(vector);
    }
  });
});
