import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { testServices } from '../support/services.ts';
import { MASTER_KEY, admin, launchChromium, openPage, signIn, startDashboardGateway } from './browser-support.ts';
import type { DashboardGateway } from './browser-support.ts';

// Issue 31, What to build 7: key management in the dashboard (role, allowlists, rotation with a
// grace period, last use and spend, nothing to write for a viewer), usage by API key, the
// Requests page on a phone and the circuit badge, each at 1280 and 375 px.

interface ListedKey {
  id: string;
  name: string;
  redacted: string;
  role: string;
  allowed_models: string[] | null;
  allowed_endpoints: string[] | null;
  previous_key_expires_at: string | null;
}

const widths = [1280, 375] as const;

async function listedKey(sample: DashboardGateway, name: string): Promise<ListedKey | undefined> {
  return ((await admin(sample.gateway, 'GET', '/admin/api-keys')) as ListedKey[]).find((key) => key.name === name);
}

async function modelsStatus(sample: DashboardGateway, key: string): Promise<number> {
  const response = await fetch(`${sample.gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return response.status;
}

async function chatWithKey(sample: DashboardGateway, key: string, model = 'openai/mock-model'): Promise<number> {
  const response = await fetch(`${sample.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'cache-control': 'no-store' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** Polls `check` (the usage and request log writers flush in batches). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition not reached in 10 s');
}

const overflow = async (page: Page): Promise<number> =>
  Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));

describe.skipIf(!testServices.chromium)('dashboard key management in chromium', { timeout: 120_000 }, () => {
  let sample: DashboardGateway;
  let browser: Browser;
  let viewerKey = '';
  let spender: { id: string; key: string; name: string; redacted: string };

  beforeAll(async () => {
    [sample, browser] = await Promise.all([
      startDashboardGateway(MASTER_KEY, {
        OPENAI_EAST_MODELS: 'mock-model,error-500',
        UPSTREAM_RETRIES: '0',
        CIRCUIT_BREAKER_FAILURES: '1',
        CIRCUIT_BREAKER_OPEN_SECONDS: '1',
      }),
      launchChromium(),
    ]);
    viewerKey = ((await admin(sample.gateway, 'POST', '/admin/api-keys', { name: 'watcher', role: 'viewer' })) as { key: string }).key;
    spender = (await admin(sample.gateway, 'POST', '/admin/api-keys', { name: 'spender' })) as typeof spender;
    expect(await chatWithKey(sample, spender.key)).toBe(200);
    expect(await chatWithKey(sample, spender.key)).toBe(200);
    await eventually(async () => {
      const usage = (await admin(sample.gateway, 'GET', '/admin/usage?group_by=api_key')) as { rows: { key: string | null }[] };
      const logged = (await admin(sample.gateway, 'GET', `/admin/requests?api_key_id=${spender.id}`)) as { requests: unknown[] };
      return usage.rows.some((row) => row.key === spender.id) && logged.requests.length >= 2;
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await sample?.stop();
  });

  it.each(widths)('creates a key with a role and allowlists and lists them (%i px)', async (width) => {
    const { page, problems, context } = await openPage(browser, width, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/api-keys`);
    const header = page.locator('#content .page-header');
    await header.waitFor();
    expect(await header.textContent()).not.toContain('never /admin');
    expect(await header.textContent()).toContain('viewer keys may also read /admin');
    const form = page.locator('[data-testid="create-key"]');
    await form.getByLabel('Name').fill(`made-${width}`);
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByLabel('Allowed models').fill('openai/*, chat-default');
    await form.getByLabel('Allowed endpoints').fill('/v1/chat/completions');
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.locator('[data-testid="new-key"]').waitFor();
    const listed = await listedKey(sample, `made-${width}`);
    expect(listed).toMatchObject({
      role: 'viewer',
      allowed_models: ['openai/*', 'chat-default'],
      allowed_endpoints: ['/v1/chat/completions'],
    });
    const row = page.locator(`[data-testid="api-keys"] tr[data-id="${listed?.id}"]`);
    await row.waitFor();
    expect(await row.locator('.key-role').textContent()).toBe('viewer');
    expect(await row.locator('.key-models').textContent()).toBe('openai/*, chat-default');
    expect(await row.locator('.key-endpoints').textContent()).toBe('/v1/chat/completions');
    expect(await page.locator(`[data-testid="api-keys"] tr[data-id="${spender.id}"] .key-models`).textContent()).toBe('all');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it.each(widths)('rotates a key with a grace period: a new secret shown once, the old one still accepted (%i px)', async (width) => {
    const old = (await admin(sample.gateway, 'POST', '/admin/api-keys', { name: `rotated-${width}` })) as { id: string; key: string };
    const { page, problems, context } = await openPage(browser, width, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/api-keys`);
    const row = page.locator(`[data-testid="api-keys"] tr[data-id="${old.id}"]`);
    await row.getByRole('button', { name: 'Rotate' }).click();
    const dialog = page.locator('[data-testid="rotate-dialog"]');
    await dialog.getByLabel('Grace period (seconds)').fill('600');
    const before = Date.now();
    await dialog.getByRole('button', { name: 'Rotate' }).click();
    await dialog.waitFor({ state: 'detached' });
    const fresh = await page.locator('[data-testid="new-key"]').inputValue();
    expect(fresh).not.toBe(old.key);
    expect(await page.locator('.created-key').textContent()).toContain(`Key “rotated-${width}” rotated.`);
    const listed = await listedKey(sample, `rotated-${width}`);
    const until = Date.parse(listed?.previous_key_expires_at ?? '');
    expect(until - before).toBeGreaterThan(590_000);
    expect(until - before).toBeLessThan(620_000);
    expect(await modelsStatus(sample, old.key)).toBe(200);
    expect(await modelsStatus(sample, fresh)).toBe(200);
    await row.locator('.key-previous').waitFor();
    expect(await row.locator('.key-previous').textContent()).toContain('old key valid until');
    expect(problems).toEqual([]);
    await context.close();
  });

  it.each(widths)('shows each key’s role, last use and spend (%i px)', async (width) => {
    const { page, problems, context } = await openPage(browser, width, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/api-keys`);
    const row = page.locator(`[data-testid="api-keys"] tr[data-id="${spender.id}"]`);
    await row.waitFor();
    expect(await row.locator('.key-role').textContent()).toBe('user');
    expect(await row.locator('.key-requests').textContent()).toBe('2');
    expect(await row.locator('.key-cost').textContent()).toMatch(/^\$0\.0\d+$/);
    expect(await row.locator('.key-last-used').textContent()).not.toBe('—');
    expect(await row.locator('.key-role').isVisible()).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  });

  it.each(widths)('a viewer sees the keys but no "New key" card and no Rotate or Deactivate (%i px)', async (width) => {
    const { page, problems, context } = await openPage(browser, width, 800);
    await signIn(page, sample.gateway, viewerKey);
    await page.goto(`${sample.gateway.url}/dashboard#/api-keys`);
    await page.locator(`[data-testid="api-keys"] tr[data-id="${spender.id}"]`).waitFor();
    expect(await page.getByRole('heading', { name: 'New key' }).count()).toBe(0);
    expect(await page.locator('#content section.card').filter({ hasText: 'New key' }).isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Rotate' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Deactivate' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it.each(widths)('groups usage by API key, under the key’s name (%i px)', async (width) => {
    const { page, problems, context } = await openPage(browser, width, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/usage`);
    await page.getByLabel('Group by').selectOption('api_key');
    const row = page.locator(`tr[data-key="spender (${spender.redacted})"]`);
    await row.waitFor();
    expect(await row.locator('td.number').first().textContent()).toBe('2');
    expect(new URL(page.url()).hash).toContain('group_by=api_key');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it.each(widths)('the Requests page keeps its first row near the top: filters fold on a phone (%i px)', async (width) => {
    const { page, problems, context } = await openPage(browser, width, 667);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/requests`);
    const first = page.locator('[data-testid="requests"] tbody tr').first();
    await first.waitFor();
    const top = (await first.boundingBox())?.y ?? Number.POSITIVE_INFINITY;
    const status = page.locator('[data-testid="request-filters"]').getByLabel('Status');
    // Open on a wide screen, folded on a phone.
    expect(await page.locator('[data-testid="filters-card"]').getAttribute('open')).toBe(width === 375 ? null : '');
    if (width === 375) {
      expect(top).toBeLessThan(600);
      expect(await status.isVisible()).toBe(false);
      await page.locator('[data-testid="filters-card"] summary').click();
    }
    expect(await status.isVisible()).toBe(true);
    await status.selectOption('2xx');
    await page.locator('[data-testid="request-filters"]').getByRole('button', { name: 'Filter' }).click();
    await first.waitFor();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it.each(widths)('a half-open circuit is amber, and so is its models’ availability (%i px)', async (width) => {
    // One failure opens openai-east's circuit for a second; nothing calls it after, so it stays half-open.
    const circuit = async (): Promise<string | undefined> => {
      const rows = (await admin(sample.gateway, 'GET', '/admin/models')) as { instance?: string; circuit?: string }[];
      return rows.find((row) => row.instance === 'openai-east')?.circuit;
    };
    if ((await circuit()) !== 'half_open') {
      expect(await chatWithKey(sample, MASTER_KEY, 'openai-east/error-500')).toBeGreaterThanOrEqual(500);
      await eventually(async () => (await circuit()) === 'half_open');
    }
    const { page, problems, context } = await openPage(browser, width, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/models`);
    const instance = page.locator('.instance[data-instance="openai-east"]');
    const badge = instance.locator('.circuit-badge');
    await badge.waitFor();
    expect(await badge.textContent()).toBe('circuit half-open');
    expect(await badge.getAttribute('class')).toContain('badge-warn');
    const available = instance.locator('tr[data-model="openai-east/mock-model"] .badge');
    expect(await available.textContent()).toBe('available (probing)');
    expect(await available.getAttribute('class')).toContain('badge-warn');
    expect(await instance.locator('.badge-bad').count()).toBe(0);
    // A closed circuit stays green.
    const healthy = page.locator('.instance[data-instance="openai"] .circuit-badge');
    expect(await healthy.getAttribute('class')).toContain('badge-ok');
    expect(problems).toEqual([]);
    await context.close();
  });
});
