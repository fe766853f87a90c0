import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, rawRequest, type RawReply } from '../support/http.ts';
import { type MockRequest, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { sendJson } from '../support/upstream.ts';

// A model that runs behind a resource route is checked against the key's allowlist wherever
// the body names it (a realtime session's, a grader's, an eval's data source, a reinforcement
// job's grader), not only at a top-level `model`; and a route that runs a model whose usage
// never comes back through the gateway (a realtime client secret, a grader run) still counts
// against the caller's limits (ADR 40).

describe('resource routes: every model a body names passes the allowlist; model work is admitted', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  const calls: MockRequest[] = [];
  const tokens = { scoped: '', limited: '' };

  beforeAll(async () => {
    mock = await startMockUpstream();
    for (const path of ['/realtime/client_secrets', '/realtime/calls', '/fine_tuning/alpha/graders/run', '/evals', '/fine_tuning/jobs']) {
      mock.route('POST', path, (request, response) => {
        calls.push(request);
        sendJson(response, 200, { id: `obj_${calls.length}`, value: 'ek_secret', object: 'ok' });
      });
    }
    const configYaml = `
providers:
  openai: { type: openai, api_key: sk-openai, base_url: "${mock.url}", models: [gpt-4o-mini, gpt-realtime-mini] }
rate_limits:
  user_paths:
    - path: /limited
      limits: [{ period: minute, max_requests: 2 }]
`;
    gateway = await startGateway({ env: { MASTER_KEY: 'models-master-key' }, configYaml });
    const key = async (name: string, userPath: string, allowed?: string[]): Promise<string> =>
      String(
        (
          await callJson(gateway, '/admin/api-keys', 201, {
            token: 'models-master-key',
            body: { name, user_path: userPath, ...(allowed === undefined ? {} : { allowed_models: allowed }) },
          })
        )['key'],
      );
    tokens.scoped = await key('scoped', '/tenants/scoped', ['openai/gpt-4o-mini', 'openai/gpt-realtime-mini']);
    tokens.limited = await key('limited', '/limited/x');
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const post = (token: string, path: string, body: unknown): Promise<RawReply> => call(gateway, path, { token, method: 'POST', body });

  /** Refused with 403 `model_not_allowed`, and nothing reached the upstream. */
  const expectRefused = async (reply: Promise<RawReply>): Promise<void> => {
    const before = calls.length;
    expectEnvelope(await reply, { status: 403, type: 'permission_error', code: 'model_not_allowed' });
    expect(calls.length).toBe(before);
  };

  it('a realtime client secret: the session model and its transcription model', async () => {
    const allowed = await post(tokens.scoped, '/v1/realtime/client_secrets', { session: { type: 'realtime', model: 'gpt-realtime-mini' } });
    expect(allowed.status, allowed.text).toBe(200);
    await expectRefused(post(tokens.scoped, '/v1/realtime/client_secrets', { session: { type: 'realtime', model: 'gpt-realtime' } }));
    await expectRefused(
      post(tokens.scoped, '/v1/realtime/client_secrets', {
        session: { type: 'transcription', audio: { input: { transcription: { model: 'gpt-4o-transcribe' } } } },
      }),
    );
  });

  it('a realtime call: the session form field read as JSON', async () => {
    const boundary = 'gateway-test-boundary';
    const form = (model: string): string =>
      [
        `--${boundary}`,
        'Content-Disposition: form-data; name="sdp"',
        '',
        'v=0',
        `--${boundary}`,
        'Content-Disposition: form-data; name="session"',
        '',
        JSON.stringify({ type: 'realtime', model }),
        `--${boundary}--`,
        '',
      ].join('\r\n');
    const send = (model: string): Promise<RawReply> =>
      rawRequest(`${gateway.url}/v1/realtime/calls`, {
        method: 'POST',
        body: form(model),
        headers: { authorization: `Bearer ${tokens.scoped}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
    const allowed = await send('gpt-realtime-mini');
    expect(allowed.status, allowed.text).toBe(200);
    await expectRefused(send('gpt-realtime'));
  });

  it('a grader run, an eval’s testing criteria, a reinforcement job’s grader', async () => {
    const grader = (model: string) => ({ type: 'score_model', name: 'g', model, input: [] });
    expect(
      (await post(tokens.scoped, '/v1/fine_tuning/alpha/graders/run', { grader: grader('gpt-4o-mini'), model_sample: 'x' })).status,
    ).toBe(200);
    await expectRefused(post(tokens.scoped, '/v1/fine_tuning/alpha/graders/run', { grader: grader('o3'), model_sample: 'x' }));
    await expectRefused(
      post(tokens.scoped, '/v1/fine_tuning/alpha/graders/run', { grader: { type: 'multi', graders: grader('o3') }, model_sample: 'x' }),
    );
    await expectRefused(post(tokens.scoped, '/v1/evals', { data_source_config: { type: 'custom' }, testing_criteria: [grader('o3')] }));
    await expectRefused(
      post(tokens.scoped, '/v1/fine_tuning/jobs', {
        model: 'gpt-4o-mini',
        method: { type: 'reinforcement', reinforcement: { grader: grader('o3') } },
      }),
    );
  });

  it('a client secret counts against the caller’s limits: the third in a minute is refused before the upstream', async () => {
    const body = { session: { type: 'realtime', model: 'gpt-realtime-mini' } };
    for (let index = 0; index < 2; index += 1) {
      const reply = await post(tokens.limited, '/v1/realtime/client_secrets', body);
      expect(reply.status, reply.text).toBe(200);
    }
    const before = calls.length;
    expectEnvelope(await post(tokens.limited, '/v1/realtime/client_secrets', body), {
      status: 429,
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      provider: 'ratelimit',
    });
    expect(calls.length).toBe(before);
  });

  it('through the passthrough, a tenant reaches no route where a model runs (it is admitted and checked on /v1)', async () => {
    const before = calls.length;
    const body = { session: { type: 'realtime', model: 'gpt-realtime' } };
    expectEnvelope(await post(tokens.limited, '/p/openai/v1/realtime/client_secrets', body), {
      status: 403,
      type: 'permission_error',
      code: 'endpoint_not_allowed',
    });
    expectEnvelope(await post(tokens.limited, '/p/openai/fine_tuning/alpha/graders/run', { grader: { model: 'o3' } }), {
      status: 403,
      type: 'permission_error',
      code: 'endpoint_not_allowed',
    });
    expect(calls.length).toBe(before);
  });
});
