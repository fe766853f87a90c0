import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { testServices } from '../support/services.ts';
import { admin, openPage, signIn, startDashboardWithBrowser } from './browser-support.ts';
import type { DashboardGateway } from './browser-support.ts';

// Issue 19: the dashboard's Audit page lists admin changes (GET /admin/audit), filters them,
// and loads further pages with next_cursor.

describe.skipIf(!testServices.chromium)('dashboard Audit page in chromium', { timeout: 90_000 }, () => {
  let sample: DashboardGateway;
  let browser: Browser;

  beforeAll(async () => {
    ({ sample, browser } = await startDashboardWithBrowser());
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await sample?.stop();
  });

  it('shows changes with before and after, filters by resource, and loads more', async () => {
    const { gateway } = sample;
    for (let index = 0; index < 55; index += 1) {
      await admin(gateway, 'PUT', '/admin/budgets', { user_path: '/audit', period: 'daily', amount: index + 1 });
    }
    const key = (await admin(gateway, 'POST', '/admin/api-keys', { name: 'audited-key' })) as { id: string; key: string };

    const { page, problems, context } = await openPage(browser, 1280, 800);
    await signIn(page, gateway);
    await page.goto(`${gateway.url}/dashboard#/audit`);
    const rows = page.locator('[data-testid="audit"] tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(50);
    const first = rows.first();
    expect(await first.getAttribute('data-resource')).toBe(`api-keys/${key.id}`);
    expect(await first.textContent()).toContain('audited-key');
    expect(await page.locator('[data-testid="audit"]').textContent()).not.toContain(key.key);

    await page.getByRole('button', { name: 'Load more' }).click();
    await rows.nth(55).waitFor();
    expect(await rows.count()).toBe(56);
    expect(await page.getByRole('button', { name: 'Load more' }).isHidden()).toBe(true);

    await page.getByLabel('Resource').fill('api-keys');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(1);
    expect(await rows.first().getAttribute('data-action')).toBe('create');
    expect(problems).toEqual([]);
    await context.close();
  });
});
