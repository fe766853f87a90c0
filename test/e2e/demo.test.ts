import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayStartTimeoutMs, killOnExit, stopChild } from '../support/gateway-process.ts';
import { descendantsOf, isAlive, killAlive } from '../support/process-tree.ts';

// `npm run demo` builds, then runs `node dist/demo/main.js`: this suite runs that script (built
// by `npm test`'s pretest), makes the request its printed curl command makes, and stops it.

const projectRoot = resolve(import.meta.dirname, '..', '..');
const demoEntry = join(projectRoot, 'dist', 'demo', 'main.js');

interface RunningDemo {
  child: ChildProcess;
  url: string;
  output: string[];
}

function startDemo(): Promise<RunningDemo> {
  const child = spawn(process.execPath, [demoEntry], {
    cwd: projectRoot,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killOnExit(child);
  const output: string[] = [];
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not print its banner:\n${output.join('')}`)), gatewayStartTimeoutMs);
    const onData = (chunk: Buffer): void => {
      output.push(chunk.toString('utf8'));
      const found = /the gateway listens on (http:\/\/127\.0\.0\.1:\d+)/.exec(output.join(''));
      if (found?.[1]) {
        clearTimeout(timer);
        resolveStart({ child, url: found[1], output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`demo exited with ${code}:\n${output.join('')}`));
    });
  });
}

/** The JSON body of the printed curl command, read from the banner itself. */
function printedCurlBody(output: string[]): string {
  const found = /-d '(\{.*\})'/.exec(output.join(''));
  if (!found?.[1]) throw new Error(`no curl command in:\n${output.join('')}`);
  return found[1];
}

describe('npm run demo', () => {
  let demo: RunningDemo;
  let gatewayPids: number[] = [];

  beforeAll(async () => {
    expect(existsSync(demoEntry), 'dist/demo/main.js is built').toBe(true);
    demo = await startDemo();
    gatewayPids = descendantsOf(demo.child.pid ?? -1);
  }, gatewayStartTimeoutMs + 5_000);

  afterAll(async () => {
    if (demo) await stopChild(demo.child, 'SIGKILL');
    killAlive(gatewayPids);
  });

  it('prints a curl command that gets a real answer through the gateway', async () => {
    const output = demo.output.join('');
    expect(output).toContain("-H 'Authorization: Bearer demo-key'");
    const response = await request(`${demo.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer demo-key', 'content-type': 'application/json' },
      body: printedCurlBody(demo.output),
    });
    const body = (await response.body.json()) as { choices: Array<{ message: { content: string } }>; provider?: string };
    expect(response.statusCode).toBe(200);
    expect(body.choices[0]?.message.content).toContain('You said: "Hello!"');
    expect(body.provider).toBe('demo');
  });

  it('streams through the printed openai snippet settings', async () => {
    const baseURL = /baseURL: '([^']+)'/.exec(demo.output.join(''))?.[1];
    const model = /model: '([^']+)'/.exec(demo.output.join(''))?.[1];
    expect(baseURL).toBe(`${demo.url}/v1`);
    const client = new OpenAI({ baseURL, apiKey: 'demo-key', maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: model ?? '',
      stream: true,
      messages: [{ role: 'user', content: 'stream please' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain('You said: "stream please"');
  });

  it('refuses a wrong key (the demo gateway is not open)', async () => {
    const response = await request(`${demo.url}/v1/models`, { headers: { authorization: 'Bearer wrong' } });
    await response.body.dump();
    expect(response.statusCode).toBe(401);
  });

  it('stops the gateway with it on SIGTERM and exits 0', async () => {
    expect(gatewayPids.length).toBeGreaterThan(0);
    const code = await stopChild(demo.child, 'SIGTERM', 30_000);
    expect(code).toBe(0);
    expect(gatewayPids.filter(isAlive)).toEqual([]);
  }, 40_000);
});
