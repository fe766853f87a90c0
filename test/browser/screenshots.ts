import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import type { Page } from 'playwright-core';

import { openStorage } from '../../src/storage/open-storage.ts';
import type { UsageRecord } from '../../src/usage/usage-store.ts';

import { startMcpFixture, type McpFixture } from '../support/mcp-fixture-server.ts';
import { admin, chatAs, launchChromium, openPage, signIn, startDashboardGateway } from './browser-support.ts';
import type { DashboardGateway } from './browser-support.ts';

// `npm run screenshots`: starts the built gateway with sample data and saves a PNG of every
// dashboard page at 1280x800 (and a few at 400x800 and 375x800) into docs/images/, for the README.

const outputDirectory = resolve(import.meta.dirname, '..', '..', 'docs', 'images');

const pages = ['rate-limits', 'models', 'mcp', 'usage', 'api-keys', 'requests'] as const;

/** Rules, virtual models, keys, budgets and some traffic, so that no page is empty. */
async function seed({ gateway }: DashboardGateway): Promise<McpFixture[]> {
  await admin(gateway, 'PUT', '/admin/rate-limits', {
    user_path: '/acme',
    limit_key: { period: 'minute' },
    max_requests: 60,
    max_tokens: 20000,
  });
  await admin(gateway, 'PUT', '/admin/rate-limits', { user_path: '/acme/support', limit_key: { period: 'hour' }, max_requests: 40 });
  await admin(gateway, 'PUT', '/admin/rate-limits', {
    scope: 'provider',
    subject: 'openai',
    limit_key: { period: 'concurrent' },
    max_requests: 8,
  });
  await admin(gateway, 'PUT', '/admin/rate-limits', {
    scope: 'model',
    subject: 'openai/gpt-4o-mini',
    limit_key: { period: 'day' },
    max_tokens: 500000,
  });
  await admin(gateway, 'PUT', '/admin/virtual-models', {
    name: 'smart',
    description: 'Spread over both instances',
    strategy: 'round_robin',
    targets: [
      { provider: 'openai', model: 'mock-model', weight: 3 },
      { provider: 'openai-east', model: 'mock-model', weight: 1 },
    ],
  });
  await admin(gateway, 'PUT', '/admin/budgets', { user_path: '/acme', period: 'monthly', amount: 50 });
  await admin(gateway, 'PUT', '/admin/budgets', { user_path: '/acme/support', period: 'daily', amount: 0.5 });
  const bot = (await admin(gateway, 'POST', '/admin/api-keys', {
    name: 'support-bot',
    user_path: '/acme/support',
    allowed_models: ['openai/*'],
    allowed_endpoints: ['/v1/chat/completions'],
  })) as { id: string; key: string };
  await admin(gateway, 'POST', '/admin/api-keys', { name: 'analytics', role: 'viewer' });
  await admin(gateway, 'POST', '/admin/api-keys', { name: 'ops-admin', role: 'admin' });
  for (let index = 0; index < 5; index += 1) await chatWithKey(gateway, bot.key);
  await admin(gateway, 'POST', `/admin/api-keys/${bot.id}/rotate`, { grace_seconds: 86_400 });
  const traffic: Array<[string, string, number]> = [
    ['/acme/support', 'openai/mock-model', 9],
    ['/acme/sales', 'openai-east/mock-model', 6],
    ['/acme', 'openai/gpt-4o-mini', 4],
    ['/labs', 'smart', 7],
  ];
  for (const [userPath, model, times] of traffic) for (let index = 0; index < times; index += 1) await chatAs(gateway, userPath, model);
  await seedHistory(gateway.cwd);
  return seedMcp(gateway);
}

async function chatWithKey(gateway: DashboardGateway['gateway'], key: string): Promise<void> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/mock-model', messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await response.arrayBuffer();
}

/** A day of earlier usage records written straight into the gateway's SQLite file, for the charts. */
async function seedHistory(cwd: string): Promise<void> {
  const storage = await openStorage({ type: 'sqlite', sqlitePath: join(cwd, 'data', 'gateway.db') });
  const hour = 3_600_000;
  const now = Date.now();
  const paths: Array<[string, string, string, number]> = [
    ['/acme/support', 'openai', 'mock-model', 14],
    ['/acme/sales', 'openai-east', 'mock-model', 9],
    ['/acme', 'openai', 'gpt-4o-mini', 6],
    ['/labs', 'openai', 'mock-model', 5],
  ];
  const records: UsageRecord[] = [];
  for (let hoursAgo = 23; hoursAgo >= 1; hoursAgo -= 1) {
    // A working-day shape: busier in the middle of the range.
    const load = 0.35 + Math.sin((Math.PI * (23 - hoursAgo)) / 23) * 0.9;
    for (const [userPath, provider, model, base] of paths) {
      const requests = Math.round(base * load * (0.7 + ((hoursAgo * 7 + base) % 5) / 8));
      for (let index = 0; index < requests; index += 1) {
        const promptTokens = 400 + ((index * 37 + hoursAgo * 11) % 900);
        const completionTokens = 120 + ((index * 53) % 400);
        records.push(historyRecord(now - hoursAgo * hour + index * 1000, userPath, provider, model, promptTokens, completionTokens));
      }
    }
  }
  await storage.usage.insertMany(records);
  await storage.close();
}

function historyRecord(
  timestamp: number,
  userPath: string,
  provider: string,
  model: string,
  promptTokens: number,
  completionTokens: number,
): UsageRecord {
  const price = model === 'gpt-4o-mini' ? [0.15, 0.6] : [2.5, 10];
  return {
    id: randomUUID(),
    requestId: `history-${randomUUID()}`,
    timestamp,
    userPath,
    apiKeyId: null,
    endpoint: '/v1/chat/completions',
    provider,
    model,
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    usage: null,
    costUsd: ((price[0] ?? 0) * promptTokens + (price[1] ?? 0) * completionTokens) / 1e6,
    cacheHit: false,
    stream: false,
    status: 200,
    latencyMs: 300,
  };
}

/** Two real MCP servers (the SDK fixture), a virtual server over them plus a missing member, and a conflict. */
async function seedMcp(gateway: DashboardGateway['gateway']): Promise<McpFixture[]> {
  const fixtures = await Promise.all([
    startMcpFixture({ label: 'docs', tools: ['echo', 'add'] }),
    startMcpFixture({ label: 'tickets', tools: ['create_issue', 'list_issues', 'whoami'] }),
  ]);
  for (const fixture of fixtures) {
    await admin(gateway, 'PUT', '/admin/mcp-servers', {
      slug: fixture.label,
      description: `The ${fixture.label} tools`,
      transport: 'http',
      url: fixture.url,
    });
  }
  await admin(gateway, 'PUT', '/admin/mcp-virtual-servers', {
    name: 'workspace',
    description: 'Tools for the support team',
    servers: ['docs', 'tickets', 'wiki'],
    tool_discovery: 'search',
  });
  await admin(gateway, 'PUT', '/admin/mcp-virtual-servers', { name: 'docs', description: 'An older bundle', servers: ['docs'] });
  return fixtures;
}

async function shoot(page: Page, url: string, name: string): Promise<void> {
  await page.goto(url);
  await page.locator('main.content h1').waitFor();
  // Let the page's data (and the chart) arrive.
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(outputDirectory, `${name}.png`), fullPage: false });
  console.log(`docs/images/${name}.png`);
}

async function main(): Promise<void> {
  mkdirSync(outputDirectory, { recursive: true });
  const sample = await startDashboardGateway();
  const browser = await launchChromium();
  const fixtures: McpFixture[] = [];
  try {
    fixtures.push(...(await seed(sample)));
    const wide = await openPage(browser, 1280, 800);
    await wide.page.goto(`${sample.gateway.url}/dashboard`);
    await wide.page.getByLabel('Master key').waitFor();
    await wide.page.screenshot({ path: join(outputDirectory, 'dashboard-sign-in.png') });
    await signIn(wide.page, sample.gateway);
    // Let the MCP servers connect and list their tools.
    await wide.page.waitForTimeout(1500);
    for (const name of pages) await shoot(wide.page, `${sample.gateway.url}/dashboard#/${name}`, `dashboard-${name}`);
    const narrow = await openPage(browser, 400, 800);
    await signIn(narrow.page, sample.gateway);
    await shoot(narrow.page, `${sample.gateway.url}/dashboard#/rate-limits`, 'dashboard-rate-limits-narrow');
    await shoot(narrow.page, `${sample.gateway.url}/dashboard#/usage`, 'dashboard-usage-narrow');
    const phone = await openPage(browser, 375, 800);
    await signIn(phone.page, sample.gateway);
    await shoot(phone.page, `${sample.gateway.url}/dashboard#/requests`, 'dashboard-requests-375');
    await shoot(phone.page, `${sample.gateway.url}/dashboard#/api-keys`, 'dashboard-api-keys-375');
    const problems = [...wide.problems, ...narrow.problems, ...phone.problems];
    if (problems.length > 0) throw new Error(`the pages logged errors:\n${problems.join('\n')}`);
  } finally {
    await browser.close();
    await sample.stop();
    await Promise.all(fixtures.map((fixture) => fixture.close()));
  }
}

await main();
