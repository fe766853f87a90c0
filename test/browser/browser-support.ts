import { existsSync } from 'node:fs';

import { chromium, type Browser, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';

import { startGateway, type GatewayProcess } from '../support/gateway-process.ts';
import { chromiumPath } from '../support/service-probes.ts';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.ts';

// Shared by the dashboard's browser tests and the screenshot script: Debian's chromium driven by
// playwright-core, against the real gateway (node dist/main.js) in front of the mock upstream.

export const MASTER_KEY = 'dashboard-master-key';

/** Debian's chromium (installed by .ci/run); CHROMIUM_PATH overrides it. */
export { chromiumPath };

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath))
    throw new Error(`chromium not found at ${chromiumPath}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--no-default-browser-check'],
    timeout: 60_000,
  });
}

export interface DashboardGateway {
  readonly mock: MockUpstream;
  readonly gateway: GatewayProcess;
  stop(): Promise<void>;
}

/** Prices per million tokens, as for the real models, so that the usage page shows costs. */
const configYaml = `pricing:
  mock-model: { input_per_mtok: 2.5, output_per_mtok: 10 }
  gpt-4o-mini: { input_per_mtok: 0.15, output_per_mtok: 0.6 }
virtual_models:
  - name: chat-default
    strategy: failover
    description: Declared in config.yaml
    targets:
      - { provider: openai, model: mock-model }
      - { provider: openai-east, model: mock-model }
`;

/**
 * Two provider instances in front of one mock upstream, usage and budgets on, and the master
 * key unless `masterKey` is null (open mode); `env` adds or overrides settings.
 */
export async function startDashboardGateway(
  masterKey: string | null = MASTER_KEY,
  env: Record<string, string> = {},
): Promise<DashboardGateway> {
  const mock = await startMockUpstream();
  const gateway = await startGateway({
    configYaml,
    env: {
      ...(masterKey === null ? {} : { MASTER_KEY: masterKey }),
      OPENAI_API_KEY: 'sk-upstream',
      OPENAI_BASE_URL: mock.url,
      OPENAI_MODELS: 'mock-model,gpt-4o-mini',
      OPENAI_EAST_API_KEY: 'sk-upstream',
      OPENAI_EAST_BASE_URL: mock.url,
      OPENAI_EAST_MODELS: 'mock-model',
      SET_RATE_LIMIT_CONFIGURED: 'rpm=600',
      ...env,
    },
  }).catch(async (error: unknown) => {
    await mock.close();
    throw error;
  });
  return {
    mock,
    gateway,
    async stop() {
      await gateway.stop();
      await mock.close();
    },
  };
}

/**
 * The dashboard gateway and a browser, started together; when either fails, what did start
 * is stopped before the error is thrown (a failed browser launch leaves no gateway behind).
 */
export async function startDashboardWithBrowser(): Promise<{ sample: DashboardGateway; browser: Browser }> {
  const [sample, browser] = await Promise.allSettled([startDashboardGateway(), launchChromium()]);
  if (sample.status === 'fulfilled' && browser.status === 'fulfilled') return { sample: sample.value, browser: browser.value };
  if (sample.status === 'fulfilled') await sample.value.stop();
  if (browser.status === 'fulfilled') await browser.value.close();
  throw sample.status === 'rejected' ? sample.reason : (browser as PromiseRejectedResult).reason;
}

export interface WatchedPage {
  readonly page: Page;
  /** Console errors, uncaught exceptions and failed requests seen so far. */
  readonly problems: string[];
}

/** A fresh context and page of the given size that records every console error. */
export async function openPage(browser: Browser, width: number, height: number): Promise<WatchedPage & { context: BrowserContext }> {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const problems: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    // Admin API refusals (a wrong key, an invalid form) are logged by the browser as failed
    // resources; the page shows them itself. Failed dashboard files are caught below.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.pathname.startsWith('/dashboard') && response.status() >= 400) problems.push(`${response.status()} for ${url.pathname}`);
    if (url.pathname.startsWith('/admin') && response.status() >= 500 && response.status() !== 503) {
      problems.push(`${response.status()} for ${url.pathname}`);
    }
  });
  page.on('requestfailed', (request) => {
    // Navigating away cancels the page's pending calls (net::ERR_ABORTED): not a fault.
    const reason = request.failure()?.errorText ?? '';
    if (!reason.includes('ERR_ABORTED')) problems.push(`request failed: ${request.url()} ${reason}`);
  });
  return { context, page, problems };
}

/** Signs in through the form and waits for the shell. */
export async function signIn(page: Page, gateway: GatewayProcess, key = MASTER_KEY): Promise<void> {
  await page.goto(`${gateway.url}/dashboard`);
  await page.getByLabel('Master key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('nav.nav').waitFor();
}

/** Sends one chat completion as `userPath`; returns the status. */
export async function chatAs(gateway: GatewayProcess, userPath: string, model = 'openai/mock-model'): Promise<number> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json', 'x-user-path': userPath },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** One admin API call with the master key. */
export async function admin(gateway: GatewayProcess, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${MASTER_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text === '' ? null : JSON.parse(text);
}

/**
 * Waits until at least `seconds` are left in the current minute. A per-minute rule's count is
 * a sliding estimate: a request made in the last seconds of a minute reads 0 a moment after
 * the minute turns (floor(1 × 59/60)), so a test that counts on seeing it must not straddle
 * the turn.
 */
export async function awayFromMinuteTurn(seconds: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await new Promise((resolve) => setTimeout(resolve, left + 250));
}
