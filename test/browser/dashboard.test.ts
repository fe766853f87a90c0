import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startMcpFixture } from '../support/mcp-fixture-server.ts';
import { testServices } from '../support/services.ts';
import {
  MASTER_KEY,
  admin,
  awayFromMinuteTurn,
  chatAs,
  launchChromium,
  openPage,
  signIn,
  startDashboardGateway,
  startDashboardWithBrowser,
} from './browser-support.ts';
import type { DashboardGateway, WatchedPage } from './browser-support.ts';

// The dashboard (CONTRACT section 10) in a real browser: Debian's chromium driven by
// playwright-core, against the built gateway in front of the mock upstream. What the page
// shows is checked against what the gateway does (real /v1 requests, the admin API).

interface ListedRule {
  scope: string;
  subject: string;
  period: string;
  max_requests: number | null;
  requests_used: number;
}

async function rules(sample: DashboardGateway): Promise<ListedRule[]> {
  return ((await admin(sample.gateway, 'GET', '/admin/rate-limits')) as { rate_limits: ListedRule[] }).rate_limits;
}

const ruleRow = (page: Page, subject: string, period = 'minute') => page.locator(`tr[data-subject="${subject}"][data-period="${period}"]`);

// A 2-core machine runs a browser, the gateway and the mock at once: generous timeouts.
describe.skipIf(!testServices.chromium)('dashboard in chromium', { timeout: 90_000 }, () => {
  let sample: DashboardGateway;
  let browser: Browser;
  let watched: WatchedPage;

  beforeAll(async () => {
    ({ sample, browser } = await startDashboardWithBrowser());
    watched = await openPage(browser, 1280, 800);
    await signIn(watched.page, sample.gateway);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await sample?.stop();
  });

  it('serves the page and its files without auth, with a strict CSP, nosniff and revalidation', async () => {
    const page = await fetch(`${sample.gateway.url}/dashboard`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toContain('<script type="module" src="/dashboard/app.js"></script>');
    const script = await fetch(`${sample.gateway.url}/dashboard/app.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const etag = script.headers.get('etag') ?? '';
    expect(etag).toMatch(/^".+"$/);
    const again = await fetch(`${sample.gateway.url}/dashboard/app.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect((await fetch(`${sample.gateway.url}/dashboard/styles.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    for (const path of ['/dashboard/nothing.js', '/dashboard/../package.json', '/dashboard/%2e%2e/package.json']) {
      expect((await fetch(`${sample.gateway.url}${path}`)).status, path).toBe(404);
    }
  });

  it('refuses a wrong master key with a readable sign-in error and keeps nothing', async () => {
    const { page, context, problems } = await openPage(browser, 1280, 800);
    await page.goto(`${sample.gateway.url}/dashboard`);
    await page.getByLabel('Master key').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const error = page.locator('form.sign-in .form-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/refused this key: invalid credentials/);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(page.url()).not.toContain('not-the-key');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('signs in with the master key, keeps it in sessionStorage only, and signs out', async () => {
    const { page } = watched;
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([MASTER_KEY]);
    expect(page.url()).not.toContain(MASTER_KEY);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Master key').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await signIn(page, sample.gateway);
  });

  it('creates a rule that a real request then hits (429); editing the caps keeps its counters; deleting lifts it', async () => {
    const { page } = watched;
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    await page.getByRole('button', { name: 'New rule' }).click();
    const dialog = page.locator('dialog[data-testid="rule-dialog"]');
    await dialog.locator('select[name="scope"]').selectOption('user_path');
    await dialog.locator('input[name="subject"]').fill('/browser/limited');
    await dialog.locator('select[name="period"]').selectOption('minute');
    await dialog.locator('input[name="max_requests"]').fill('1');
    await dialog.getByRole('button', { name: 'Create rule' }).click();
    await ruleRow(page, '/browser/limited').waitFor();
    expect(await dialog.count()).toBe(0);

    // The steps below count on one minute window (a cap of 1, then the count kept by an edit).
    await awayFromMinuteTurn(40);
    expect(await chatAs(sample.gateway, '/browser/limited/app')).toBe(200);
    expect(await chatAs(sample.gateway, '/browser/limited')).toBe(429);
    // The live refresh shows the request counted.
    const used = ruleRow(page, '/browser/limited').locator('[data-cell="requests"] [data-used]');
    await expect.poll(() => used.textContent(), { timeout: 15_000 }).toBe('1');

    await ruleRow(page, '/browser/limited').getByRole('button', { name: 'Edit' }).click();
    await dialog.locator('input[name="max_requests"]').fill('5');
    expect(await dialog.locator('.banner-warn').isHidden()).toBe(true);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => ruleRow(page, '/browser/limited').locator('[data-cell="requests"]').textContent(), { timeout: 15_000 })
      .toContain('1 / 5');
    const edited = (await rules(sample)).find((rule) => rule.subject === '/browser/limited');
    expect(edited).toMatchObject({ max_requests: 5, requests_used: 1 });
    expect(await chatAs(sample.gateway, '/browser/limited')).toBe(200);

    await ruleRow(page, '/browser/limited').getByRole('button', { name: 'Delete' }).click();
    await page.locator('dialog[data-testid="confirm-dialog"]').getByRole('button', { name: 'Delete rule' }).click();
    await ruleRow(page, '/browser/limited').waitFor({ state: 'detached' });
    expect((await rules(sample)).some((rule) => rule.subject === '/browser/limited')).toBe(false);
    for (let index = 0; index < 3; index += 1) expect(await chatAs(sample.gateway, '/browser/limited')).toBe(200);
  });

  it('moves a rule to another period (counters restart) and shows API errors in the form', async () => {
    const { page } = watched;
    await admin(sample.gateway, 'PUT', '/admin/rate-limits', {
      user_path: '/browser/move',
      limit_key: { period: 'minute' },
      max_requests: 10,
    });
    expect(await chatAs(sample.gateway, '/browser/move')).toBe(200);
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    await ruleRow(page, '/browser/move').getByRole('button', { name: 'Edit' }).click();
    const dialog = page.locator('dialog[data-testid="rule-dialog"]');
    await dialog.locator('select[name="period"]').selectOption('hour');
    expect(await dialog.locator('.banner-warn').isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await ruleRow(page, '/browser/move', 'hour').waitFor();
    const moved = (await rules(sample)).filter((rule) => rule.subject === '/browser/move');
    expect(moved.map(({ period, requests_used }) => [period, requests_used])).toEqual([['hour', 0]]);

    await page.getByRole('button', { name: 'New rule' }).click();
    await dialog.locator('select[name="scope"]').selectOption('provider');
    await dialog.locator('input[name="subject"]').fill('openai');
    await dialog.getByRole('button', { name: 'Create rule' }).click();
    const error = dialog.locator('.form-error');
    await error.waitFor();
    expect(await error.textContent()).toContain('at least one of max_requests or max_tokens is required');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('resets every counter only after the word reset is typed', async () => {
    const { page } = watched;
    await admin(sample.gateway, 'PUT', '/admin/rate-limits', {
      user_path: '/browser/reset',
      limit_key: { period: 'hour' },
      max_requests: 10,
    });
    expect(await chatAs(sample.gateway, '/browser/reset')).toBe(200);
    await page.goto(`${sample.gateway.url}/dashboard#/rate-limits`);
    await page.getByRole('button', { name: 'Reset all counters' }).click();
    const dialog = page.locator('dialog[data-testid="confirm-dialog"]');
    const confirm = dialog.getByRole('button', { name: 'Reset all' });
    await dialog.getByLabel('Type reset').fill('rese');
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Type reset').fill('reset');
    await confirm.click();
    await dialog.waitFor({ state: 'detached' });
    expect((await rules(sample)).find((rule) => rule.subject === '/browser/reset')?.requests_used).toBe(0);
  });

  it('creates a virtual model and an API key (shown once)', async () => {
    const { page } = watched;
    await page.goto(`${sample.gateway.url}/dashboard#/models`);
    await page.getByRole('button', { name: 'New virtual model' }).click();
    const dialog = page.locator('dialog[data-testid="virtual-model-dialog"]');
    await dialog.locator('input[name="name"]').fill('browser-alias');
    await dialog.getByLabel('Provider instance').selectOption('openai-east');
    await dialog.getByLabel('Model').fill('mock-model');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.locator('tr[data-name="browser-alias"]').waitFor();
    expect(await chatAs(sample.gateway, '/', 'browser-alias')).toBe(200);

    await page.goto(`${sample.gateway.url}/dashboard#/api-keys`);
    await page.getByLabel('Name').fill('browser-key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.locator('[data-testid="new-key"]').inputValue();
    expect(key).toMatch(/^sk-gw-[A-Za-z0-9_-]{43}$/);
    await page.locator('tr', { hasText: 'browser-key' }).waitFor();
    const models = await fetch(`${sample.gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(200);
  });

  it('creates a budget and shows its spend; changes its amount', async () => {
    const { page } = watched;
    await page.goto(`${sample.gateway.url}/dashboard#/usage`);
    await page.getByRole('button', { name: 'New budget' }).click();
    const dialog = page.locator('dialog[data-testid="budget-dialog"]');
    await dialog.locator('input[name="user_path"]').fill('/browser/budget');
    await dialog.locator('select[name="period"]').selectOption('daily');
    await dialog.locator('input[name="amount"]').fill('-1');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.locator('.form-error').waitFor();
    expect(await dialog.locator('.form-error').textContent()).toContain('amount must be a number of dollars above 0');
    await dialog.locator('input[name="amount"]').fill('25');
    await dialog.getByRole('button', { name: 'Save' }).click();
    const row = page.locator('tr[data-user-path="/browser/budget"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('$25.00');
    await row.getByRole('button', { name: 'Edit' }).click();
    await dialog.locator('input[name="amount"]').fill('30');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('$30.00');
    const { budgets } = (await admin(sample.gateway, 'GET', '/admin/budgets')) as { budgets: Array<Record<string, unknown>> };
    expect(budgets.find((budget) => budget['user_path'] === '/browser/budget')).toMatchObject({
      period: 'daily',
      amount: 30,
      origin: 'manual',
    });
  });

  it('creates a virtual MCP server, lists its missing members, adds a real server it then finds; edits and deletes both', async () => {
    const { page } = watched;
    const fixture = await startMcpFixture({ label: 'docs', tools: ['echo', 'add', 'create_issue'] });
    try {
      await page.goto(`${sample.gateway.url}/dashboard#/mcp`);
      await page.getByRole('button', { name: 'New virtual server' }).click();
      const dialog = page.locator('dialog[data-testid="mcp-virtual-dialog"]');
      await dialog.locator('input[name="name"]').fill('Browser-Tools');
      await dialog.locator('input[name="description"]').fill('Made in the browser');
      await dialog.getByLabel('Other member slugs').fill('docs, tickets');
      await dialog.getByRole('button', { name: 'Create' }).click();
      const row = page.locator('tr[data-name="browser-tools"]');
      await row.waitFor();
      expect(await row.locator('[data-cell="members"]').textContent()).toBe('docs · missingtickets · missing');
      expect(await row.locator('[data-cell="tool-discovery"]').textContent()).toBe('off gateway default');
      const listed = (await admin(sample.gateway, 'GET', '/admin/mcp-virtual-servers')) as Array<Record<string, unknown>>;
      expect(listed.find((virtual) => virtual['name'] === 'browser-tools')).toEqual({
        name: 'browser-tools',
        description: 'Made in the browser',
        servers: ['docs', 'tickets'],
        missing_servers: ['docs', 'tickets'],
        conflict: '',
        managed: true,
        configured_tool_discovery: '',
        tool_discovery: 'off',
      });

      // A real upstream named docs: it connects, its tools are counted, and the member is found.
      await page.getByRole('button', { name: 'Add server' }).click();
      const serverDialog = page.locator('dialog[data-testid="mcp-server-dialog"]');
      await serverDialog.locator('input[name="slug"]').fill('docs');
      await serverDialog.locator('input[name="url"]').fill(fixture.url);
      await serverDialog.getByRole('button', { name: 'Add server' }).click();
      const server = page.locator('tr[data-slug="docs"]');
      await server.waitFor();
      await expect.poll(() => server.locator('[data-cell="tools"]').textContent(), { timeout: 20_000 }).toBe('3');
      expect(await server.textContent()).toContain('connected');
      await expect.poll(() => row.locator('[data-cell="members"]').textContent(), { timeout: 15_000 }).toBe('docstickets · missing');

      await row.getByRole('button', { name: 'Edit' }).click();
      await dialog.locator('select[name="tool_discovery"]').selectOption('search');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => row.locator('[data-cell="tool-discovery"]').textContent(), { timeout: 15_000 }).toBe('search');

      await page.getByRole('button', { name: 'New virtual server' }).click();
      await dialog.locator('input[name="name"]').fill('no members');
      await dialog.getByRole('button', { name: 'Create' }).click();
      await dialog.locator('.form-error').waitFor();
      expect(await dialog.locator('.form-error').textContent()).toMatch(/^Error: .+\(name\)$/);
      await dialog.getByRole('button', { name: 'Cancel' }).click();

      for (const [target, label] of [
        [row, 'browser-tools'],
        [server, 'docs'],
      ] as const) {
        await target.getByRole('button', { name: 'Delete' }).click();
        await page.locator('dialog[data-testid="confirm-dialog"]').getByRole('button', { name: 'Delete' }).click();
        await target.waitFor({ state: 'detached' });
        expect(await page.locator(`tr[data-name="${label}"], tr[data-slug="${label}"]`).count()).toBe(0);
      }
      expect(await admin(sample.gateway, 'GET', '/admin/mcp-virtual-servers')).toEqual([]);
      expect(await admin(sample.gateway, 'GET', '/admin/mcp-servers')).toEqual([]);
    } finally {
      await fixture.close();
    }
  });

  it.each([
    [1280, 800],
    [400, 800],
  ])('renders every page without console errors at %ix%i', async (width, height) => {
    const sized = await openPage(browser, width, height);
    try {
      await signIn(sized.page, sample.gateway);
      for (const hash of ['rate-limits', 'models', 'mcp', 'usage', 'api-keys']) {
        await sized.page.goto(`${sample.gateway.url}/dashboard#/${hash}`);
        await sized.page.locator('main.content h1').waitFor();
        await sized.page.waitForLoadState('networkidle');
        expect(await sized.page.locator('.banner-error').count(), hash).toBe(0);
        const overflow = Number(await sized.page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
        expect(overflow, `${hash} is wider than the window`).toBeLessThanOrEqual(0);
      }
      expect(sized.problems).toEqual([]);
      expect(watched.problems).toEqual([]);
    } finally {
      await sized.context.close();
    }
  });
});

describe.skipIf(!testServices.chromium)('dashboard without a master key, MCP and usage off', { timeout: 90_000 }, () => {
  it('says the admin API is open, signs in with no key, and shows switched-off features as such', async () => {
    // The browser first: a launch that fails leaves no gateway behind.
    const browser = await launchChromium();
    const open = await startDashboardGateway(null, { MCP_ENABLED: 'false', USAGE_ENABLED: 'false' }).catch(async (error: unknown) => {
      await browser.close();
      throw error;
    });
    try {
      const { page, problems } = await openPage(browser, 1280, 800);
      await page.goto(`${open.gateway.url}/dashboard`);
      await page.getByText('This gateway has no MASTER_KEY').waitFor();
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('nav.nav').waitFor();
      await page.locator('tr[data-subject="/configured"]').waitFor();
      await page.goto(`${open.gateway.url}/dashboard#/mcp`);
      expect(await page.locator('.banner-off').first().textContent()).toContain('MCP_ENABLED is off');
      expect(await page.getByRole('button', { name: 'New virtual server' }).isDisabled()).toBe(true);
      await page.goto(`${open.gateway.url}/dashboard#/usage`);
      await page.locator('[data-testid="usage-chart"] .banner-off').waitFor();
      expect(await page.locator('[data-testid="usage-chart"]').textContent()).toContain('USAGE_ENABLED is off');
      expect(await page.locator('.banner-error').count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
      await open.stop();
    }
  });
});
