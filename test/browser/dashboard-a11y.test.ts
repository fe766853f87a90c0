import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { testServices } from '../support/services.ts';
import { admin, awayFromMinuteTurn, chatAs, openPage, signIn, startDashboardWithBrowser } from './browser-support.ts';
import type { DashboardGateway } from './browser-support.ts';

// Issue 16, the dashboard defects an operator found: sign-in and sign-out, the live refresh and
// screen readers, focus after dialogs, contrast, accessible names, the Offline state.

const ruleRow = (page: Page, subject: string) => page.locator(`tr[data-subject="${subject}"][data-period="minute"]`);

/** What the page's focused element is, as `tag:text@row subject`. */
const focusedControl = (page: Page): Promise<string> =>
  page.evaluate<string>(`(() => {
    const active = document.activeElement;
    if (!active || active === document.body) return 'body';
    const row = active.closest('tr');
    return active.tagName.toLowerCase() + ':' + (active.textContent ?? '') + '@' + (row?.dataset.subject ?? '');
  })()`);

/** WCAG contrast ratio of two `rgb(...)` colours (alpha ignored: the badges are opaque). */
function contrast(foreground: string, background: string): number {
  const luminance = (color: string): number => {
    const [r, g, b] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((part) => {
      const channel = Number(part) / 255;
      return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
  };
  const [dark, light] = [luminance(foreground), luminance(background)].sort((a, b) => a - b);
  return ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05);
}

describe.skipIf(!testServices.chromium)('dashboard defects in chromium: sign-in, focus, names, contrast', { timeout: 120_000 }, () => {
  let sample: DashboardGateway;
  let browser: Browser;

  beforeAll(async () => {
    ({ sample, browser } = await startDashboardWithBrowser());
    await admin(sample.gateway, 'PUT', '/admin/rate-limits', { user_path: '/a11y', limit_key: { period: 'minute' }, max_requests: 50 });
    await admin(sample.gateway, 'PUT', '/admin/budgets', { user_path: '/a11y', period: 'daily', amount: 5 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await sample?.stop();
  });

  it('loads the sign-in page without calling /admin and without a console error; sign-out is a plain notice', async () => {
    const { page, context } = await openPage(browser, 1280, 800);
    const consoleErrors: string[] = [];
    const adminCalls: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') consoleErrors.push(message.text());
    });
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/admin')) adminCalls.push(`${request.method()} ${url.pathname}`);
    });
    await page.goto(`${sample.gateway.url}/dashboard`);
    await page.getByLabel('Master key').waitFor();
    await page.waitForLoadState('networkidle');
    expect(adminCalls).toEqual([]);
    expect(consoleErrors).toEqual([]);

    await signIn(page, sample.gateway);
    await page.getByRole('button', { name: 'Sign out' }).click();
    const notice = page.locator('[data-testid="signed-out"]');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/signed out/i);
    expect(await notice.getAttribute('role')).toBe('status');
    expect(await page.locator('.form-error').isVisible()).toBe(false);
    expect(await page.locator('[role="alert"]:visible').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
    await context.close();
  });

  it('refreshes the rules in place: the focused row button keeps focus and only the status line is live', async () => {
    const { page, context, problems } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    const edit = ruleRow(page, '/a11y').getByRole('button', { name: 'Edit' });
    await edit.focus();
    expect(await focusedControl(page)).toBe('button:Edit@/a11y');
    const used = ruleRow(page, '/a11y').locator('[data-cell="requests"] [data-used]');
    await awayFromMinuteTurn(20);
    await expect.poll(() => used.textContent(), { timeout: 5_000 }).toMatch(/^\d+$/);
    const before = Number(await used.textContent());
    expect(await chatAs(sample.gateway, '/a11y')).toBe(200);
    await expect.poll(() => used.textContent(), { timeout: 15_000 }).toBe(String(before + 1));
    expect(await focusedControl(page)).toBe('button:Edit@/a11y');
    // No live region around the page: only the status word and the notices band announce.
    const live = await page.evaluate<string[]>(`
      [...document.querySelectorAll('[aria-live], [role="status"], [role="alert"], [role="log"]')]
        .filter((element) => element.closest('[hidden]') === null)
        .map((element) => element.className + ':' + (element.getAttribute('aria-live') ?? element.getAttribute('role') ?? ''))
    `);
    expect(live.sort()).toEqual(['live-state:status', 'notices:polite']);
    expect(await page.locator('[data-testid="live-status"] .live-state').textContent()).toBe('Live');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('returns focus to the control that opened a dialog when Escape closes it', async () => {
    const { page, context } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    const openers: Array<[string, () => Promise<void>, string]> = [
      ['#/rate-limits', () => page.getByRole('button', { name: 'New rule' }).focus(), 'button:New rule@'],
      ['#/rate-limits', () => ruleRow(page, '/a11y').getByRole('button', { name: 'Edit' }).focus(), 'button:Edit@/a11y'],
      ['#/rate-limits', () => ruleRow(page, '/a11y').getByRole('button', { name: 'Reset' }).focus(), 'button:Reset@/a11y'],
      ['#/usage', () => page.getByRole('button', { name: 'New budget' }).focus(), 'button:New budget@'],
      ['#/usage', () => page.locator('tr[data-user-path="/a11y"]').getByRole('button', { name: 'Edit' }).focus(), 'button:Edit@'],
    ];
    for (const [hash, focus, expected] of openers) {
      if (!page.url().endsWith(hash)) await page.goto(`${sample.gateway.url}/dashboard${hash}`);
      await focus();
      await page.keyboard.press('Enter');
      await page.locator('dialog[open]').waitFor();
      await page.keyboard.press('Escape');
      await page.locator('dialog').waitFor({ state: 'detached' });
      expect(await focusedControl(page), expected).toBe(expected);
    }
    await context.close();
  });

  it.each(['light', 'dark'] as const)('gives every badge and message tone at least 4.5:1 contrast (%s)', async (scheme) => {
    const { page, context } = await openPage(browser, 1280, 800);
    await page.emulateMedia({ colorScheme: scheme });
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    await ruleRow(page, '/a11y').waitFor();
    const samples = await page.evaluate<Array<{ name: string; color: string; background: string }>>(`(() => {
      const tones = ['badge badge-ok', 'badge badge-bad', 'badge badge-warn', 'badge badge-scope', 'badge badge-muted', 'badge badge-neutral'];
      const messages = ['form-error', 'banner banner-error', 'banner banner-warn', 'banner banner-off', 'banner banner-info'];
      const content = document.getElementById('content');
      const made = [...tones, ...messages].map((name) => {
        const element = document.createElement(name.startsWith('badge') ? 'span' : 'p');
        element.className = name;
        element.textContent = 'sample';
        content.append(element);
        return element;
      });
      // And the badges the page itself shows (manual, config, scope).
      const shown = [...content.querySelectorAll('.badge')].filter((element) => !made.includes(element));
      return [...made, ...shown].map((element) => {
        const style = getComputedStyle(element);
        return { name: element.className + ' ' + element.textContent, color: style.color, background: style.backgroundColor };
      });
    })()`);
    expect(samples.length).toBeGreaterThan(11);
    const failing = samples
      .map((sample) => ({ ...sample, ratio: Math.round(contrast(sample.color, sample.background) * 100) / 100 }))
      .filter((sample) => sample.ratio < 4.5);
    expect(failing).toEqual([]);
    await context.close();
  });

  it('names every meter and every table column, the row buttons column included', async () => {
    const { page, context } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway);
    for (const [hash, meterName] of [
      ['rate-limits', /^Requests used$/],
      ['usage', /^Budget spent$/],
    ] as const) {
      await page.goto(`${sample.gateway.url}/dashboard#/${hash}`);
      await page.locator('[role="meter"]').first().waitFor();
      expect(await page.getByRole('meter', { name: meterName }).count(), hash).toBeGreaterThan(0);
      const meters = await page
        .locator('[role="meter"]')
        .evaluateAll((elements) =>
          elements.map((element) => [element.getAttribute('aria-label') ?? '', element.getAttribute('aria-valuetext') ?? '']),
        );
      for (const [label, text] of meters) {
        expect(label, hash).not.toBe('');
        expect(text, hash).toMatch(/^\d+(\.\d+)? of \d+(\.\d+)?$/);
      }
      const headers = await page.locator('th').evaluateAll((elements) => elements.map((element) => (element.textContent ?? '').trim()));
      expect(headers.length, hash).toBeGreaterThan(0);
      expect(
        headers.filter((text) => text === ''),
        hash,
      ).toEqual([]);
      expect(await page.getByRole('columnheader', { name: 'Actions' }).count(), hash).toBeGreaterThan(0);
    }
    await context.close();
  });

  it('says Offline (not Live) while the gateway does not answer, keeps the last rules, and goes Live again', async () => {
    const { page, context } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    const status = page.locator('[data-testid="live-status"]');
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 10_000 }).toBe('live');
    await page.route('**/admin/rate-limits', (route) => route.abort('connectionrefused'));
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 10_000 }).toBe('offline');
    expect(await status.locator('.live-state').textContent()).toBe('Offline');
    const dot = await page.evaluate<string>(
      `getComputedStyle(document.querySelector('[data-testid="live-status"]'), '::before').backgroundColor`,
    );
    const okColour = await page.evaluate<string>(`(() => {
      const probe = document.createElement('span');
      probe.style.color = 'var(--ok)';
      document.body.append(probe);
      return getComputedStyle(probe).color;
    })()`);
    expect(dot).not.toBe(okColour);
    expect(await ruleRow(page, '/a11y').isVisible()).toBe(true);
    await page.unroute('**/admin/rate-limits');
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 10_000 }).toBe('live');
    await context.close();
  });

  it('gives up on a call that never answers after 10 s: Offline, and the refresh timer keeps going', async () => {
    const { page, context } = await openPage(browser, 1280, 800);
    await signIn(page, sample.gateway);
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    const status = page.locator('[data-testid="live-status"]');
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 10_000 }).toBe('live');
    let hung = 0;
    // The route handler never fulfils: the request stays open until the page gives up on it.
    await page.route('**/admin/rate-limits', () => {
      hung += 1;
    });
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 20_000 }).toBe('offline');
    expect(hung).toBe(1);
    await page.unroute('**/admin/rate-limits');
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 10_000 }).toBe('live');
    await context.close();
  }, 45_000);
});
