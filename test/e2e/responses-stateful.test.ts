import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { responsesHandler } from '../support/mock-openai-extras.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { sendJson } from '../support/upstream.ts';

// A native Responses upstream answers 404 for state it does not hold (an expired
// previous_response_id, an unknown conversation). That 404 is the upstream's answer, not a
// sign that the instance lacks /responses: chat could not carry the state anyway.

describe('POST /v1/responses with state the native upstream does not hold', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let client: OpenAI;
  let nativeCalls = 0;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const answer = responsesHandler();
    mock.route('POST', '/responses', (request, response) => {
      nativeCalls += 1;
      const body = request.body as Record<string, unknown>;
      if (body['previous_response_id'] === undefined) return answer(request, response);
      sendJson(response, 404, {
        error: {
          message: `Previous response with id '${String(body['previous_response_id'])}' not found.`,
          type: 'invalid_request_error',
          param: 'previous_response_id',
          code: 'previous_response_not_found',
        },
      });
    });
    const configYaml = `providers:\n  openai: { type: openai, api_key: sk-native, base_url: "${mock.url}", models: [mock-model] }\n`;
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it("relays the upstream's 404 instead of falling back to chat, and keeps the instance native", async () => {
    const thrown = await rejectionOf(
      client.responses.create({ model: 'openai/mock-model', input: 'hi', previous_response_id: 'resp_gone' }),
    );
    const error = expectClientError(thrown, { status: 404, type: 'not_found_error', provider: 'openai', param: 'previous_response_id' });
    expect(error.message).toBe("Previous response with id 'resp_gone' not found.");
    expect(mock.requests.filter((recorded) => recorded.path === '/chat/completions')).toHaveLength(0);
    const next = await client.responses.create({ model: 'openai/mock-model', input: 'hi' });
    expect(next.object).toBe('response');
    expect(nativeCalls).toBe(2);
  });
});
