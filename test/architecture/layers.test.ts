import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/core/project-root.ts';

/**
 * The import boundaries of src/ (ADR 38), checked by dependency-cruiser with the rules of
 * `.dependency-cruiser.cjs` (also `npm run lint:deps`). Imports only go down:
 *
 *   main.ts, services.ts, demo/, cluster/, lifecycle/   (composition)
 *   → http/, admin/                                      (the edge)
 *   → gateway/
 *   → admission/, dialects/
 *   → config/      (reads file and environment, composes the domains' schemas)
 *   → storage/
 *   → routing/
 *   → auth/, ratelimit/, budgets/, usage/, cache/, mcp/, guardrails/, ownership/,
 *     observability/, request-log/, responses/, audit/  (domains, own their settings)
 *   → providers/
 *   → streaming/
 *   → core/, errors/, lazy/, types/, testing/
 *
 * A folder may import its own layer and any layer below it, never one above; no import
 * circles anywhere in src/. Type-only imports count. Tests (`*.test.ts`) are exempt from the
 * layer rule, not from circles. A new top-level folder of src/ must be given a layer.
 */

const root = projectRoot(import.meta.url);

interface Violation {
  readonly from: string;
  readonly to: string;
  readonly rule: { readonly name: string };
  readonly cycle?: ReadonlyArray<{ readonly name: string }>;
}

function describeViolation(violation: Violation): string {
  const cycle = violation.cycle?.map((step) => step.name).join(' -> ');
  return `${violation.rule.name}: ${violation.from} -> ${violation.to}${cycle ? ` (circle: ${violation.from} -> ${cycle})` : ''}`;
}

/** Lines of code as eslint's max-lines counts them (blank and comment-only lines skipped), roughly. */
function codeLines(text: string): number {
  let inBlock = false;
  let count = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (inBlock) {
      if (line.includes('*/')) inBlock = false;
      continue;
    }
    if (line === '' || line.startsWith('//')) continue;
    if (line.startsWith('/*')) {
      inBlock = !line.includes('*/');
      continue;
    }
    count += 1;
  }
  return count;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('architecture', () => {
  it('has no import circles and no import up the layers in src/', { timeout: 240_000 }, () => {
    const output = execFileSync(
      process.execPath,
      [
        join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
        'src',
        '--config',
        '.dependency-cruiser.cjs',
        '--output-type',
        'json',
      ],
      { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
    );
    const result = JSON.parse(output) as { summary: { violations: Violation[]; totalCruised: number } };
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(result.summary.violations.map(describeViolation)).toEqual([]);
  });

  it('lists source files over 300 lines (eslint fails at 400)', () => {
    const long = sourceFiles(join(root, 'src'))
      .map((file) => ({ file: relative(root, file), lines: codeLines(readFileSync(file, 'utf8')) }))
      .filter(({ lines }) => lines > 300)
      .sort((a, b) => b.lines - a.lines);
    if (long.length > 0)
      console.warn(
        `max-lines: ${long.length} file(s) over 300 lines (warn; 400 is an error):\n${long.map(({ file, lines }) => `  ${file}: ${lines}`).join('\n')}`,
      );
    expect(long.every(({ lines }) => lines <= 400)).toBe(true);
  });
});
