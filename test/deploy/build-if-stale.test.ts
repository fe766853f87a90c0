import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { staleReason } from '../../scripts/build-if-stale.ts';

// `npm run demo` reuses a fresh build (issue 31): it builds only when dist/ is older than a source.

function touch(path: string, secondsAgo: number): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '');
  const at = Date.now() / 1000 - secondsAgo;
  utimesSync(path, at, at);
}

describe('build-if-stale', () => {
  it('builds when dist/ is missing or older than a file under src/ or the build configuration, not otherwise', () => {
    const root = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
    touch(join(root, 'src', 'core', 'a.ts'), 100);
    touch(join(root, 'package.json'), 100);
    expect(staleReason(root)).toMatch(/inputs\.json is missing/);
    touch(join(root, 'dist', 'chunks', 'inputs.json'), 50);
    expect(staleReason(root)).toBeNull();
    touch(join(root, 'src', 'core', 'deep', 'b.ts'), 10);
    expect(staleReason(root)).toMatch(/b\.ts changed after the last build/);
    touch(join(root, 'dist', 'chunks', 'inputs.json'), 5);
    expect(staleReason(root)).toBeNull();
    touch(join(root, 'tsconfig.json'), 1);
    expect(staleReason(root)).toMatch(/tsconfig\.json/);
  });

  it('is what `npm run demo` runs instead of an unconditional build', () => {
    const scripts = (
      JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts['demo']).toBe('tsx scripts/build-if-stale.ts && exec node dist/demo/main.js');
  });
});
