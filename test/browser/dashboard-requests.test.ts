import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { testServices } from '../support/services.ts';
import { MASTER_KEY, admin, chatAs, launchChromium, openPage, signIn, startDashboardGateway } from './browser-support.ts';
import type { DashboardGateway, WatchedPage } from './browser-support.ts';

// Issue 16's Requests page and per-key usage, in Chromium against the built gateway: what the
// page shows is what the request log holds after real /v1 calls (a failover chain, a 429 from a
// rule, calls made with a managed key).

async function chatWithKey(sample: DashboardGateway, key: string): Promise<number> {
  const response = await fetch(`${sample.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'cache-control': 'no-store' },
    body: JSON.stringify({ model: 'openai/mock-model', messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** Waits until the request log lists `count` entries matching `query` (its writer flushes in batches). */
async function logged(sample: DashboardGateway, query: string, count: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const page = (await admin(sample.gateway, 'GET', `/admin/requests?${query}`)) as { requests: unknown[] };
    if (page.requests.length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the request log never listed ${count} entries for ${query}`);
}

const rows = (page: Page) => page.locator('[data-testid="requests"] tbody tr');

describe.skipIf(!testServices.chromium)('dashboard Requests page in chromium', { timeout: 90_000 }, () => {
  let sample: DashboardGateway;
  let browser: Browser;
  let watched: WatchedPage;
  let keyId = '';

  beforeAll(async () => {
    [sample, browser] = await Promise.all([
      startDashboardGateway(MASTER_KEY, { OPENAI_MODELS: 'mock-model,gpt-4o-mini,error-503', UPSTREAM_RETRIES: '0' }),
      launchChromium(),
    ]);
    await admin(sample.gateway, 'PUT', '/admin/virtual-models', {
      name: 'flaky',
      strategy: 'failover',
      targets: [
        { provider: 'openai', model: 'error-503' },
        { provider: 'openai-east', model: 'mock-model' },
      ],
    });
    await admin(sample.gateway, 'PUT', '/admin/rate-limits', { user_path: '/limited', limit_key: { period: 'minute' }, max_requests: 1 });
    expect(await chatAs(sample.gateway, '/browser/failover', 'flaky')).toBe(200);
    expect(await chatAs(sample.gateway, '/limited', 'openai/mock-model')).toBe(200);
    expect(await chatAs(sample.gateway, '/limited', 'openai/mock-model')).toBe(429);
    const created = (await admin(sample.gateway, 'POST', '/admin/api-keys', { name: 'reporting-key' })) as { id: string; key: string };
    keyId = created.id;
    expect(await chatWithKey(sample, created.key)).toBe(200);
    expect(await chatWithKey(sample, created.key)).toBe(200);
    await logged(sample, 'limit=10', 5);
    watched = await openPage(browser, 1280, 900);
    await signIn(watched.page, sample.gateway);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await sample?.stop();
  });

  it('lists requests newest first, and the filters narrow the list', async () => {
    const { page, problems } = watched;
    await page.goto(`${sample.gateway.url}/dashboard#/requests`);
    await rows(page).first().waitFor();
    expect(await rows(page).count()).toBe(5);
    // Newest first: the managed key's calls were the last ones made.
    expect(await rows(page).first().locator('td').nth(5).textContent()).toBe('reporting-key');
    const filters = page.locator('[data-testid="request-filters"]');
    await filters.getByLabel('Status').selectOption('429');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).first().getAttribute('data-status')).toBe('429');
    await filters.getByLabel('Status').selectOption('');
    await filters.getByLabel('User path').fill('/browser');
    await filters.getByRole('button', { name: 'Filter' }).click();
    // The 429 row of the last filter is one row too: wait for the new list, not for a count.
    await expect.poll(() => rows(page).first().getAttribute('data-provider')).toBe('openai-east');
    expect(await rows(page).count()).toBe(1);
    await filters.getByLabel('User path').fill('');
    await filters.getByLabel('API key id').fill(keyId);
    await filters.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows(page).count()).toBe(2);
    await filters.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => rows(page).count()).toBe(5);
    expect(problems).toEqual([]);
  });

  it('the drawer shows the failover chain; Escape closes it and returns focus to the row’s button', async () => {
    const { page, problems } = watched;
    const row = page.locator('[data-testid="requests"] tbody tr[data-provider="openai-east"]');
    const opener = row.getByRole('button', { name: /Details of request/ });
    await opener.click();
    const drawer = page.getByRole('dialog', { name: /Request/ });
    await drawer.waitFor();
    const attempts = drawer.locator('table.attempts tbody tr');
    await attempts.first().waitFor();
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).getAttribute('data-provider')).toBe('openai');
    expect(await attempts.nth(0).textContent()).toContain('503');
    expect(await attempts.nth(1).getAttribute('data-provider')).toBe('openai-east');
    expect(await drawer.textContent()).toContain('flaky');
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });
    expect(await opener.evaluate((element) => element.ownerDocument.activeElement === element)).toBe(true);
    expect(problems).toEqual([]);
  });

  it('the drawer of a 429 names the rule that refused it', async () => {
    const { page, problems } = watched;
    const opener = page.locator('[data-testid="requests"] tbody tr[data-status="429"]').getByRole('button', { name: /Details/ });
    await opener.click();
    const reason = page.locator('[data-testid="rate-limit-reason"]');
    await reason.waitFor();
    const text = (await reason.textContent()) ?? '';
    for (const part of ['user_path', '/limited', 'minute', 'requests']) expect(text).toContain(part);
    // Unpriced or refused: the cost reads as a dash, never $0.00.
    expect(await page.getByRole('dialog').locator('dd', { hasText: '$' }).count()).toBe(0);
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    expect(await opener.evaluate((element) => element.ownerDocument.activeElement === element)).toBe(true);
    expect(problems).toEqual([]);
  });

  it('the live tail adds a new request on top without moving focus', async () => {
    const { page, problems } = watched;
    const before = await rows(page).count();
    await page.getByLabel('Live tail').check();
    const filterButton = page.locator('[data-testid="request-filters"]').getByRole('button', { name: 'Filter' });
    await filterButton.focus();
    const firstRow = rows(page).first();
    const firstBefore = await firstRow.getAttribute('data-id');
    expect(await chatAs(sample.gateway, '/browser/tail')).toBe(200);
    await expect.poll(() => rows(page).count(), { timeout: 15_000 }).toBe(before + 1);
    expect(await rows(page).first().locator('td').nth(6).textContent()).toBe('/browser/tail');
    // The rows already shown stayed in place (the tail prepends; nothing is re-rendered).
    expect(await rows(page).nth(1).getAttribute('data-id')).toBe(firstBefore);
    expect(await filterButton.evaluate((element) => element.ownerDocument.activeElement === element)).toBe(true);
    expect(await page.locator('.tail-status').textContent()).toContain('1 new request');
    await page.getByLabel('Live tail').uncheck();
    expect(problems).toEqual([]);
  });

  it('charts latency and error rate by provider and by model', async () => {
    const { page, problems } = watched;
    const stats = page.locator('[data-testid="request-stats"]');
    await stats.locator('tr[data-key="openai-east"]').waitFor();
    expect(await page.locator('[data-testid="latency-chart"] svg[role="img"]').getAttribute('aria-label')).toBe('p95 latency by provider');
    expect(await page.locator('[data-testid="error-chart"] rect').count()).toBeGreaterThan(1);
    await page.getByLabel('Group by').selectOption('model');
    // Grouped by what executed each request: the failover's failed attempt is in its chain only.
    await stats.locator('tr[data-key="mock-model"]').waitFor();
    expect(await stats.locator('tr[data-key="error-503"]').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('the API keys page shows each key’s last use, requests and cost', async () => {
    const { page, problems } = watched;
    await page.goto(`${sample.gateway.url}/dashboard#/api-keys`);
    const row = page.locator(`[data-testid="api-keys"] tr[data-id="${keyId}"]`);
    await row.waitFor();
    expect(await row.locator('.key-requests').textContent()).toBe('2');
    expect(await row.locator('.key-cost').textContent()).toMatch(/^\$0\.0\d+$/);
    expect(await row.locator('.key-last-used').textContent()).not.toBe('—');
    await page.getByLabel('Usage window').selectOption('24h');
    await expect.poll(() => row.locator('.key-requests').textContent()).toBe('2');
    expect(problems).toEqual([]);
  });
  it('fits a 400 px wide window, with the drawer open too', async () => {
    const narrow = await openPage(browser, 400, 800);
    try {
      await signIn(narrow.page, sample.gateway);
      await narrow.page.goto(`${sample.gateway.url}/dashboard#/requests`);
      await rows(narrow.page).first().waitFor();
      await narrow.page.locator('[data-testid="request-stats"] table').waitFor();
      const overflow = () => narrow.page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect(Number(await overflow())).toBeLessThanOrEqual(0);
      await rows(narrow.page)
        .first()
        .getByRole('button', { name: /Details/ })
        .click();
      await narrow.page.locator('[data-testid="request-drawer"] dl').waitFor();
      expect(Number(await overflow())).toBeLessThanOrEqual(0);
      expect(narrow.problems).toEqual([]);
    } finally {
      await narrow.context.close();
    }
  });
});
