import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { dashboardContentSecurityPolicy, defaultDashboardDirectory, loadDashboardAssets, registerDashboardRoutes } from './dashboard.ts';

/** A dashboard folder with a page, a module, a private file and a file of an unserved kind. */
function sampleDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'dashboard-'));
  mkdirSync(join(directory, 'lib'));
  writeFileSync(join(directory, 'index.html'), '<!doctype html><title>x</title>');
  writeFileSync(join(directory, 'lib', 'api.js'), 'export const x = 1;');
  writeFileSync(join(directory, '.env'), 'SECRET=1');
  writeFileSync(join(directory, 'notes.md'), '# private');
  return directory;
}

async function appFor(directory: string) {
  const app = Fastify();
  registerDashboardRoutes(app, directory);
  await app.ready();
  return app;
}

describe('dashboard routes', () => {
  it('serves index.html at /dashboard and /dashboard/, modules by path, with the security headers', async () => {
    const app = await appFor(sampleDirectory());
    for (const url of ['/dashboard', '/dashboard/', '/dashboard/index.html']) {
      const reply = await app.inject({ url });
      expect(reply.statusCode, url).toBe(200);
      expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(reply.body).toContain('<title>x</title>');
      expect(reply.headers['content-security-policy']).toBe(dashboardContentSecurityPolicy);
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['x-frame-options']).toBe('DENY');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.headers['cache-control']).toBe('no-cache');
    }
    const module = await app.inject({ url: '/dashboard/lib/api.js' });
    expect(module.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(module.body).toBe('export const x = 1;');
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const app = await appFor(sampleDirectory());
    const first = await app.inject({ url: '/dashboard/lib/api.js' });
    const etag = String(first.headers['etag']);
    const again = await app.inject({ url: '/dashboard/lib/api.js', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const changed = await app.inject({ url: '/dashboard/lib/api.js', headers: { 'if-none-match': '"other"' } });
    expect(changed.statusCode).toBe(200);
  });

  it('serves nothing but the loaded files: no dotfiles, no other kinds, no way out of the folder', async () => {
    const app = await appFor(sampleDirectory());
    for (const url of [
      '/dashboard/.env',
      '/dashboard/notes.md',
      '/dashboard/../package.json',
      '/dashboard/lib/../../x',
      '/dashboard/missing.js',
    ]) {
      expect((await app.inject({ url })).statusCode, url).toBe(404);
    }
  });

  it('finds the repository dashboard from src (and from dist, at the same depth)', () => {
    const assets = loadDashboardAssets(defaultDashboardDirectory);
    expect([...assets.keys()]).toEqual(
      expect.arrayContaining(['index.html', 'app.js', 'styles.css', 'lib/api.js', 'pages/rate-limits.js']),
    );
    expect(assets.get('index.html')?.body.toString()).toContain('/dashboard/app.js');
  });

  it('answers 404 when the folder is missing', async () => {
    const app = await appFor(join(tmpdir(), 'no-such-dashboard-folder'));
    expect((await app.inject({ url: '/dashboard' })).statusCode).toBe(404);
  });

  it('says in session.json whether the admin API is open, without a key and uncached', async () => {
    for (const adminOpen of [true, false]) {
      const app = Fastify();
      registerDashboardRoutes(app, sampleDirectory(), adminOpen);
      await app.ready();
      const reply = await app.inject({ url: '/dashboard/session.json' });
      expect(reply.statusCode).toBe(200);
      expect(reply.json()).toEqual({ admin_open: adminOpen });
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
    }
  });
});
