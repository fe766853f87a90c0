import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { testServices } from '../support/services.ts';
import { admin, openPage, signIn, startDashboardWithBrowser } from './browser-support.ts';
import type { DashboardGateway } from './browser-support.ts';

// Issue 19: "the dashboard shows what the role may do and hides the rest". A viewer key signs
// in and sees every page without a write control; an admin key sees them.

const pages = ['rate-limits', 'models', 'mcp', 'usage', 'api-keys', 'audit'];

/** Visits every page; per page, how many write controls are visible. */
async function visibleWriteControls(page: Page, url: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const hash of pages) {
    await page.goto(`${url}/dashboard#/${hash}`);
    await page.locator('#content h1').first().waitFor();
    // Pages load their tables after mounting: let their admin API calls finish.
    await page.waitForLoadState('networkidle');
    let visible = 0;
    for (const control of await page.locator('#content button, #content form').all()) {
      if ((await control.isVisible()) && (await control.getAttribute('data-write')) !== null) visible += 1;
    }
    counts[hash] = visible;
  }
  return counts;
}

describe.skipIf(!testServices.chromium)('dashboard roles in chromium', { timeout: 120_000 }, () => {
  let sample: DashboardGateway;
  let browser: Browser;
  let viewerKey: string;
  let adminKey: string;
  let userKey: string;

  beforeAll(async () => {
    ({ sample, browser } = await startDashboardWithBrowser());
    const { gateway } = sample;
    await admin(gateway, 'PUT', '/admin/budgets', { user_path: '/roles', period: 'daily', amount: 5 });
    viewerKey = ((await admin(gateway, 'POST', '/admin/api-keys', { name: 'viewer', role: 'viewer' })) as { key: string }).key;
    adminKey = ((await admin(gateway, 'POST', '/admin/api-keys', { name: 'admin', role: 'admin' })) as { key: string }).key;
    userKey = ((await admin(gateway, 'POST', '/admin/api-keys', { name: 'user' })) as { key: string }).key;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await sample?.stop();
  });

  it('a viewer key signs in read-only: no page shows a write control', async () => {
    const { page, problems, context } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway, viewerKey);
    expect(await page.locator('.role-badge').isVisible()).toBe(true);
    const counts = await visibleWriteControls(page, sample.gateway.url);
    expect(counts).toEqual(Object.fromEntries(pages.map((hash) => [hash, 0])));
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    await page.locator('#content h1').first().waitFor();
    // In the page, but hidden (so also out of the accessibility tree).
    const newRule = page.locator('#content button', { hasText: 'New rule' });
    await newRule.waitFor({ state: 'attached' });
    expect(await newRule.isHidden()).toBe(true);
    expect(await page.getByRole('button', { name: 'New rule' }).count()).toBe(0);
    await page.goto(`${sample.gateway.url}/dashboard#/api-keys`);
    await page.locator('[data-testid="create-key"]').waitFor({ state: 'attached' });
    expect(await page.locator('[data-testid="create-key"]').isHidden()).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('an admin key sees the write controls', async () => {
    const { page, problems, context } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway, adminKey);
    expect(await page.locator('.role-badge').count()).toBe(0);
    const counts = await visibleWriteControls(page, sample.gateway.url);
    for (const hash of ['rate-limits', 'models', 'mcp', 'usage', 'api-keys']) expect(counts[hash], hash).toBeGreaterThan(0);
    expect(await page.getByRole('button', { name: 'New rule' }).count()).toBe(0); // on the last page (audit)
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    await page.getByRole('button', { name: 'New rule' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a user key is refused at sign-in with a message naming the roles', async () => {
    const { page, context } = await openPage(browser, 1280, 800);
    await page.goto(`${sample.gateway.url}/dashboard`);
    await page.getByLabel('Master key').fill(userKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('form.sign-in').textContent(), { timeout: 30_000 }).toContain('admin or viewer role');
    await context.close();
  });
});
