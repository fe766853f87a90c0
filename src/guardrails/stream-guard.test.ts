import { Readable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { buildGuardrails } from './guardrail-settings.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { Guardrails, type ActiveGuardrails } from './pipeline.ts';

const silent = pino({ level: 'silent' });
const active = async (items: Array<Record<string, unknown>>): Promise<ActiveGuardrails> =>
  (await Guardrails.create(buildGuardrails(items), silent))!.select('/', 'm', '/v1/chat/completions', { requestId: 'r' })!;

const chunk = (content: string | null, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;

/** Streams `pieces` (one content delta each, then a finish and [DONE]) through the guard; the text the client sees. */
async function streamed(guard: ActiveGuardrails, pieces: string[], byteSplit = 0): Promise<{ text: string; raw: string }> {
  let wire = pieces.map((piece) => chunk(piece)).join('') + chunk(null, 'stop') + 'data: [DONE]\n\n';
  const frames = byteSplit > 0 ? wire.match(new RegExp(`[\\s\\S]{1,${byteSplit}}`, 'g'))! : [wire];
  wire = '';
  let raw = '';
  for await (const part of guard.stream(Readable.from(frames.map((frame) => Buffer.from(frame))))) raw += String(part);
  const text = [...raw.matchAll(/^data: (\{.*\})$/gm)]
    .map((match) => (JSON.parse(match[1]!) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
    .join('');
  return { text, raw };
}

describe('stream guard', () => {
  it('redacts PII split across chunks, one character at a time, and across SSE frame boundaries', async () => {
    const guard = await active([{ name: 'pii', type: 'pii' }]);
    const text = 'Reach me at jane.doe@example.com or 4111 1111 1111 1111, thanks.';
    const expected = 'Reach me at [REDACTED_EMAIL] or [REDACTED_CARD], thanks.';
    expect((await streamed(guard, [...text])).text).toBe(expected);
    expect((await streamed(guard, ['Reach me at jane.d', 'oe@exam', 'ple.com or 4111 11', '11 1111 1111, thanks.'], 7)).text).toBe(
      expected,
    );
  });

  it('keeps the finish chunk and [DONE], and releases held text with the finish', async () => {
    const guard = await active([{ name: 'pii', type: 'pii' }]);
    const { raw, text } = await streamed(guard, ['short ', 'answer']);
    expect(text).toBe('short answer');
    expect(raw).toContain('"finish_reason":"stop"');
    expect(raw.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('fails the stream with guardrail_blocked before the secret leaves, naming the guardrail', async () => {
    const guard = await active([{ name: 'no-secrets', type: 'secrets' }]);
    const key = `sk-proj-${'x'.repeat(40)}`;
    let raw = '';
    const error = await (async () => {
      for await (const part of guard.stream(
        Readable.from(
          [chunk('here: '), chunk(key.slice(0, 10)), chunk(key.slice(10)), chunk(' done', 'stop')].map((frame) => Buffer.from(frame)),
        ),
      ))
        raw += String(part);
    })().catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('guardrail_blocked');
    expect((error as GatewayError).headers['x-guardrail-blocked']).toBe('no-secrets');
    expect((error as GatewayError).message).not.toContain('xxxx');
    expect(raw).not.toContain('sk-proj');
  });

  it('monitor mode changes nothing', async () => {
    const guard = await active([{ name: 'pii', type: 'pii', mode: 'monitor' }]);
    expect((await streamed(guard, ['mail a@b', '.io'])).text).toBe('mail a@b.io');
  });
});

describe('input and output', () => {
  it('redacts message texts without touching the caller body, and blocks', async () => {
    const guard = await active([
      { name: 'pii', type: 'pii', on: 'input' },
      { name: 'deny', type: 'deny_list', terms: ['forbidden'] },
    ]);
    const body = {
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'mail a@b.io' }] },
        { role: 'user', content: 'x' },
      ],
    };
    const out = await guard.input(body);
    expect(out.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'mail [REDACTED_EMAIL]' }] },
      { role: 'user', content: 'x' },
    ]);
    expect(body.messages[0]?.content).toEqual([{ type: 'text', text: 'mail a@b.io' }]);
    await expect(guard.input({ model: 'm', messages: [{ role: 'user', content: 'FORBIDDEN word' }] })).rejects.toThrow(
      /guardrail "deny" blocked the request: term found/,
    );
    const answer = JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'a@b.io' } }] });
    expect(guard.output(answer)).toBe(answer);
  });

  it('counts input tokens with a real tokenizer', async () => {
    const guard = await active([{ name: 'size', type: 'max_input_tokens', max_tokens: 10 }]);
    await expect(guard.input({ model: 'm', messages: [{ role: 'user', content: 'hello there' }] })).resolves.toBeDefined();
    await expect(guard.input({ model: 'm', messages: [{ role: 'user', content: 'hello there '.repeat(10) }] })).rejects.toThrow(
      /more than 10 input tokens/,
    );
  });
});
