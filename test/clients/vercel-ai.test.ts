import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { AGENT_FINAL, AGENT_PREAMBLE, agentChatHandler, agentMessagesHandler } from '../support/mock-agent.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { lastUpstreamBody } from '../support/upstream.ts';

// The Vercel AI SDK (`ai` + `@ai-sdk/openai`, pinned in package.json) through the built
// gateway: a two-step tool loop where the model writes text before its tool call, on an
// OpenAI-chat-wire and an Anthropic-wire upstream, through `openai(model)` (Responses API:
// step 2 refers to step 1's output with `item_reference`) and `openai.chat(model)`, JSON and
// streaming.

const MASTER_KEY = 'test-master-key';

let chatMock: MockUpstream;
let anthropicMock: MockAnthropic;
let gateway: GatewayProcess;
/** Bodies the SDK sent to the gateway, in order. */
const sent: Record<string, unknown>[] = [];

beforeAll(async () => {
  chatMock = await startMockUpstream();
  chatMock.route('POST', '/chat/completions', agentChatHandler);
  anthropicMock = await startMockAnthropic({ apiKey: 'sk-ant' });
  anthropicMock.route('POST', '/messages', agentMessagesHandler);
  const configYaml = [
    'providers:',
    `  chatwire: { type: openai-compatible, api_key: sk-chat, base_url: "${chatMock.url}", models: [agent-model] }`,
    `  claude: { type: anthropic, api_key: sk-ant, base_url: "${anthropicMock.url}", models: [claude-agent] }`,
    '',
  ].join('\n');
  gateway = await startGateway({ env: { MASTER_KEY }, configYaml, startTimeoutMs: 60_000 });
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await chatMock?.close();
  await anthropicMock?.close();
});

function provider(): ReturnType<typeof createOpenAI> {
  const recording: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string') sent.push(JSON.parse(init.body) as Record<string, unknown>);
    return fetch(input, init);
  };
  return createOpenAI({ baseURL: `${gateway.url}/v1`, apiKey: MASTER_KEY, fetch: recording });
}

const weather = tool({
  description: 'Current weather of a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

interface Loop {
  text: string;
  steps: { text: string; toolCalls: { toolName: string; input: unknown }[] }[];
}

async function runLoop(model: LanguageModel, stream: boolean): Promise<Loop> {
  const options = { model, prompt: 'What is the weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(4) };
  if (!stream) return generateText(options);
  const result = streamText({
    ...options,
    onError: ({ error }) => {
      throw error;
    },
  });
  let streamed = '';
  for await (const delta of result.textStream) streamed += delta;
  const [text, steps] = await Promise.all([result.text, result.steps]);
  expect(streamed).toBe(AGENT_PREAMBLE + AGENT_FINAL);
  return { text, steps };
}

const upstreams = [
  { wire: 'OpenAI chat', model: 'chatwire/agent-model', requests: () => chatMock.requests },
  { wire: 'Anthropic', model: 'claude/claude-agent', requests: () => anthropicMock.requests },
];
const cases = upstreams.flatMap((upstream) =>
  [false, true].flatMap((stream) => [
    { ...upstream, api: 'openai(model) (Responses)', responses: true, stream },
    { ...upstream, api: 'openai.chat(model)', responses: false, stream },
  ]),
);

describe.each(cases)('Vercel AI SDK $api, stream $stream, $wire upstream', ({ model, requests, responses, stream }) => {
  it('runs a two-step tool loop where the model writes text before its tool call', async () => {
    const openai = provider();
    const first = sent.length;
    const loop = await runLoop(responses ? openai(model) : openai.chat(model), stream);
    expect(loop.steps).toHaveLength(2);
    expect(loop.steps[0]?.text).toBe(AGENT_PREAMBLE);
    expect(loop.steps[0]?.toolCalls).toMatchObject([{ toolName: 'get_weather', input: { city: 'Paris' } }]);
    expect(loop.text).toBe(AGENT_FINAL);
    // The upstream's second call carried the assistant's text, its tool call and the result.
    const upstream = lastUpstreamBody(requests());
    expect(upstream).toContain(AGENT_PREAMBLE);
    expect(upstream).toContain('sunny in Paris');
    const step2 = sent.slice(first)[1];
    if (responses) {
      // What the SDK really sends on the Responses path: the earlier text as an item_reference.
      expect(step2?.['input']).toContainEqual({ type: 'item_reference', id: expect.stringMatching(/^msg_/) as unknown });
    } else {
      expect(JSON.stringify(step2?.['messages'])).toContain(AGENT_PREAMBLE);
    }
  });
});
