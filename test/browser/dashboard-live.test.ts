import { setTimeout as sleep } from 'node:timers/promises';

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { testServices } from '../support/services.ts';
import { admin, chatAs, launchChromium, openPage, signIn, startDashboardGateway } from './browser-support.ts';
import type { DashboardGateway } from './browser-support.ts';

// Issue 16, the dashboard defects an operator found: unpriced usage, stale chart answers, usage
// filters in the address, usage and budgets refreshing on their own, the phone navigation, and
// notices covering row buttons.

const stat = (page: Page, label: string) =>
  page.locator('.stat', { has: page.locator('.stat-label', { hasText: label }) }).locator('.stat-value');

/** Sets the usage page's filters through its controls. */
async function filterUsage(page: Page, userPath: string, groupBy = 'user_path'): Promise<void> {
  await page.locator('select[name="group_by"]').selectOption(groupBy);
  await page.locator('input[name="user_path"]').fill(userPath);
  await page.locator('input[name="user_path"]').press('Enter');
}

interface UsageAnswer {
  rows: Array<{ key: string; requests: number }>;
}

/** Waits until GET /admin/usage counts `requests` under `userPath` (the batch writer stored them). */
async function usageRecorded(sample: DashboardGateway, userPath: string, requests: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = (await admin(sample.gateway, 'GET', `/admin/usage?group_by=day&user_path=${userPath}`)) as UsageAnswer;
    const counted = answer.rows.reduce((sum, row) => sum + row.requests, 0);
    if (counted === requests) return;
    if (Date.now() > deadline) throw new Error(`${counted} requests under ${userPath}, not ${requests}`);
    await sleep(50);
  }
}

describe.skipIf(!testServices.chromium)('dashboard defects in chromium: usage, refresh, phone, notices', { timeout: 120_000 }, () => {
  let sample: DashboardGateway;
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
    sample = await startDashboardGateway(undefined, { OPENAI_MODELS: 'mock-model,gpt-4o-mini,free-model' }).catch(
      async (error: unknown) => {
        await browser.close();
        throw error;
      },
    );
    expect(await chatAs(sample.gateway, '/unpriced/app', 'openai/free-model')).toBe(200);
    expect(await chatAs(sample.gateway, '/unpriced/app', 'openai/mock-model')).toBe(200);
    await usageRecorded(sample, '/unpriced', 2);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await sample?.stop();
  });

  it('shows "—", not $0.00, for usage without a price', async () => {
    const { page, context, problems } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/usage`);
    await filterUsage(page, '/unpriced', 'model');
    await page.locator('tr[data-key="free-model"]').waitFor();
    expect(await stat(page, 'Requests').textContent()).toBe('2');
    expect(await stat(page, 'Cost').textContent()).toBe('—');
    expect(await page.locator('tr[data-key="free-model"] td').last().textContent()).toBe('—');
    expect(await page.locator('tr[data-key="mock-model"] td').last().textContent()).toMatch(/^\$\d/);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('drops a usage answer that arrives after a newer load started (no stale chart)', async () => {
    const { page, context } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway);
    // The hourly series (the first load, 24 hours) answers late; the daily one at once.
    await page.route('**/admin/usage?*', async (route) => {
      if (route.request().url().includes('bucket=hour')) await new Promise((resolve) => setTimeout(resolve, 2_500));
      await route.continue().catch(() => {});
    });
    await page.goto(`${sample.gateway.url}/dashboard#/usage`);
    await page.locator('select[name="range"]').selectOption('7d');
    const chart = page.locator('[data-testid="usage-chart"] svg');
    await expect.poll(() => chart.getAttribute('aria-label'), { timeout: 10_000 }).toContain('last 7 days');
    // Past the late answer: the chart still shows the range that is selected.
    await page.waitForTimeout(3_500);
    expect(await chart.getAttribute('aria-label')).toContain('last 7 days');
    expect(await page.locator('select[name="range"]').inputValue()).toBe('7d');
    await context.close();
  });

  it('keeps the usage filters in the address: a reload restores them and Back undoes a change', async () => {
    const { page, context, problems } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/usage`);
    await page.locator('select[name="range"]').selectOption('7d');
    await page.locator('select[name="group_by"]').selectOption('model');
    await page.locator('input[name="user_path"]').fill('/unpriced');
    await page.locator('input[name="user_path"]').press('Enter');
    await expect.poll(() => new URL(page.url()).hash).toBe('#/usage?range=7d&group_by=model&user_path=%2Funpriced');
    await page.reload();
    await page.locator('tr[data-key="free-model"]').waitFor();
    const values = () =>
      Promise.all(
        ['select[name="range"]', 'select[name="group_by"]', 'input[name="user_path"]'].map((name) => page.locator(name).inputValue()),
      );
    expect(await values()).toEqual(['7d', 'model', '/unpriced']);
    await page.goBack();
    await expect.poll(values).toEqual(['7d', 'model', '']);
    await page.goBack();
    await expect.poll(values).toEqual(['7d', 'user_path', '']);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('refreshes usage and budgets on its own without taking focus, and not while the tab is hidden', async () => {
    const { page, context, problems } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/usage`);
    await filterUsage(page, '/auto');
    await page.locator('[data-testid="usage-chart"] .empty').waitFor();
    await page.locator('select[name="metric"]').focus();
    expect(await chatAs(sample.gateway, '/auto/app')).toBe(200);
    await admin(sample.gateway, 'PUT', '/admin/budgets', { user_path: '/auto', period: 'daily', amount: 7 });
    await expect.poll(() => stat(page, 'Requests').textContent(), { timeout: 25_000 }).toBe('1');
    await page.locator('tr[data-user-path="/auto"]').waitFor({ timeout: 15_000 });
    expect(await page.evaluate<string | null>(`document.activeElement?.getAttribute('name') ?? null`)).toBe('metric');
    expect(await page.locator('[data-testid="live-status"]').getAttribute('data-state')).toBe('live');

    // Hidden: no call at all; shown again: at once.
    const calls: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/admin/')) calls.push(request.url());
    });
    const visibility = (hidden: boolean) =>
      page.evaluate(`(() => {
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${String(hidden)} });
        document.dispatchEvent(new Event('visibilitychange'));
      })()`);
    await visibility(true);
    await page.waitForTimeout(11_000);
    expect(calls).toEqual([]);
    await visibility(false);
    await expect.poll(() => calls.length, { timeout: 3_000 }).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('reaches every page from the navigation on a 375 px phone', async () => {
    const { page, context, problems } = await openPage(browser, 375, 667);
    await signIn(page, sample.gateway);
    const links = await page.locator('nav.nav a').all();
    expect(links.length).toBeGreaterThan(5);
    for (const link of links) {
      const box = await link.boundingBox();
      const name = await link.textContent();
      expect(box, name ?? '').not.toBeNull();
      if (box === null) continue;
      expect(box.x, `${name} starts on screen`).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, `${name} ends on screen`).toBeLessThanOrEqual(375);
      const hit = await page.evaluate<string | null>(
        `document.elementFromPoint(${box.x + box.width / 2}, ${box.y + box.height / 2})?.closest('a')?.textContent ?? null`,
      );
      expect(hit, `${name} can be tapped`).toBe(name);
    }
    await page.locator('nav.nav a', { hasText: 'API keys' }).click();
    await page.locator('main.content h1', { hasText: 'API keys' }).waitFor();
    expect(Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'))).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows a notice where it covers no button, even with the page scrolled to a row at the bottom', async () => {
    for (let index = 0; index < 6; index += 1) {
      await admin(sample.gateway, 'PUT', '/admin/rate-limits', {
        user_path: `/notice/${index}`,
        limit_key: { period: 'minute' },
        max_requests: 10,
      });
    }
    const { page, context } = await openPage(browser, 375, 667);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    const row = page.locator('tr[data-subject="/notice/3"]');
    await row.getByRole('button', { name: 'Reset' }).click();
    await page.locator('dialog[data-testid="confirm-dialog"]').getByRole('button', { name: 'Reset counters' }).click();
    const notice = page.locator('.notice', { hasText: 'Counters reset.' });
    await notice.waitFor();
    // Bring a row's buttons to where a bottom-corner notice would sit.
    await page.evaluate(`(() => {
      const box = [...document.querySelectorAll('tr[data-subject="/notice/3"] button')]
        .find((button) => button.textContent === 'Delete')
        .getBoundingClientRect();
      window.scrollBy(0, box.top + box.height / 2 - (window.innerHeight - 35));
    })()`);
    const overlaps = await page.evaluate<string[]>(`(() => {
      const note = document.querySelector('.notice')?.getBoundingClientRect();
      const header = (document.querySelector('.top') ?? document.querySelector('.topbar'))?.getBoundingClientRect();
      if (!note || !header) return ['no notice or header'];
      const inside = note.top >= 0 && note.bottom <= window.innerHeight && note.left >= 0 && note.right <= window.innerWidth;
      // What lies under the sticky header is hidden by the header itself, notice or not.
      const covered = [...document.querySelectorAll('#content button, #content a, #content input, #content select')]
        .filter((element) => element.offsetParent !== null)
        .filter((element) => {
          const box = element.getBoundingClientRect();
          if (box.top + box.height / 2 <= header.bottom) return false;
          return box.left < note.right && box.right > note.left && box.top < note.bottom && box.bottom > note.top;
        })
        .map((element) => element.tagName + ' ' + element.textContent);
      return inside ? covered : ['notice off screen', ...covered];
    })()`);
    expect(overlaps).toEqual([]);
    await context.close();
  });
});
