import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// ADR 0025: V8's heap flags must be set before the gateway's modules load. In a split ESM
// bundle the entry's static imports are evaluated before its own code, so dist/main.js
// (scripts/bundle.ts) statically imports only the heap policy (and esbuild's runtime) and
// loads src/main.ts's chunk with a dynamic import after it.
const dist = resolve(import.meta.dirname, '..', '..', 'dist');
const manifest = join(dist, 'chunks', 'inputs.json');

function staticImports(source: string): string[] {
  return [...source.matchAll(/import\s*(?:[^"';]*?from\s*)?"(\.\/chunks\/[^"]+)"/g)].map((match) => match[1] ?? '');
}

describe.skipIf(!existsSync(manifest))('the start-up bundle', () => {
  const inputs = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, string[]>;
  const entry = readFileSync(join(dist, 'main.js'), 'utf8');

  it('imports the heap policy first, and nothing of the gateway statically', () => {
    const imports = staticImports(entry).map((path) => path.slice(2));
    expect(inputs[imports[0] ?? '']).toEqual(['src/lifecycle/heap-policy.ts']);
    const policyChunk = readFileSync(join(dist, imports[0] ?? ''), 'utf8');
    expect(staticImports(policyChunk)).toEqual([]);
    for (const path of imports.slice(1))
      expect(inputs[path]?.every((input) => input.startsWith('node_modules/') || !input.startsWith('src/'))).toBe(true);
  });

  it('loads src/main.ts with a dynamic import after the policy', () => {
    const dynamic = /await import\("\.\/(chunks\/[^"]+)"\)/.exec(entry)?.[1] ?? '';
    expect(inputs[dynamic]).toContain('src/main.ts');
  });
});
