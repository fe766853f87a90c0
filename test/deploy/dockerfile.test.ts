import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { dockerignoreIncludes, execForm, globalArgs, readDockerfile, type Instruction } from './dockerfile-rules.ts';

// No Docker engine (and no hadolint package) on these machines: the image is not built here.
// These checks read the Dockerfile and hold it to what README "Deploy" promises, plus the
// hadolint rules that matter for it (DL3000, DL3002, DL3003, DL3007, DL3009, DL3015, DL3020,
// DL3025, DL4003, DL4004).

const root = resolve(import.meta.dirname, '..', '..');
const instructions = readDockerfile(join(root, 'Dockerfile'));
const finalStage = Math.max(...instructions.map((instruction) => instruction.stage));
const inFinal = (keyword: string): Instruction[] => instructions.filter((i) => i.stage === finalStage && i.keyword === keyword);
const all = (keyword: string): Instruction[] => instructions.filter((i) => i.keyword === keyword);
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main: string; engines: { node: string } };

function baseImage(from: Instruction): string {
  const image = from.args.split(' ')[0] ?? '';
  return image.replace(/^\$\{(\w+)\}$/, (_whole, name: string) => globalArgs(instructions).get(name) ?? image);
}

describe('Dockerfile', () => {
  it('is multi-stage, every stage on the pinned slim image of the supported Node line (DL3007)', () => {
    const froms = all('FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const supportedMajor = /(\d+)\./.exec(packageJson.engines.node)?.[1];
    for (const from of froms) {
      const image = baseImage(from);
      expect(image, `line ${from.line}`).toMatch(/^node:\d+\.\d+\.\d+-bookworm-slim$/);
      expect(image.startsWith(`node:${supportedMajor}.`), image).toBe(true);
    }
    expect(froms[0]?.args).toMatch(/ AS build$/);
  });

  it('builds with the dev dependencies, then keeps only the production ones (npm ci --omit=dev)', () => {
    const build = instructions.filter((i) => i.stage === 0 && i.keyword === 'RUN').map((i) => i.args);
    const full = build.findIndex((run) => /npm ci (?!.*--omit=dev)/.test(run));
    const compile = build.findIndex((run) => run.includes('npm run build'));
    const production = build.findIndex((run) => /npm ci .*--omit=dev/.test(run));
    expect(full).toBeGreaterThanOrEqual(0);
    expect(compile).toBeGreaterThanOrEqual(full);
    expect(production).toBeGreaterThanOrEqual(compile);
    expect(build[production]).toMatch(/--omit=dev .*&& npm rebuild better-sqlite3/);
    const copied = inFinal('COPY').map((copy) => copy.args);
    expect(copied).toContain('--from=build /app/node_modules ./node_modules');
    expect(copied).toContain('--from=build /app/dist ./dist');
    expect(inFinal('RUN').some((run) => /npm (ci|install)/.test(run.args))).toBe(false);
  });

  it('runs as a non-root numeric user (DL3002)', () => {
    const users = inFinal('USER');
    const last = users.at(-1)?.args ?? 'root';
    expect(last).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
  });

  it('starts node itself in exec form, so SIGTERM reaches it (DL3025)', () => {
    const cmd = inFinal('CMD');
    expect(cmd).toHaveLength(1);
    expect(execForm(cmd[0]?.args ?? '')).toEqual(['node', packageJson.main]);
    expect(inFinal('ENTRYPOINT')).toEqual([]);
    expect(existsSync(join(root, packageJson.main.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts')))).toBe(true);
  });

  it('checks /health with node (no curl in the slim image)', () => {
    const healthcheck = inFinal('HEALTHCHECK');
    expect(healthcheck).toHaveLength(1);
    const command = execForm((healthcheck[0]?.args ?? '').replace(/^.*?CMD /, ''));
    expect(command?.[0]).toBe('node');
    expect(command?.join(' ')).toContain('/health');
    expect(command?.join(' ')).not.toContain('/health/');
  });

  it('keeps SQLite on the /data volume and listens on all interfaces', () => {
    const env = inFinal('ENV')
      .map((i) => i.args)
      .join(' ');
    expect(env).toMatch(/SQLITE_PATH=\/data\//);
    expect(env).toMatch(/HOST=0\.0\.0\.0/);
    // Never open mode: on 0.0.0.0 without a credential the gateway refuses to start, and the
    // image gives no way around that (no ALLOW_OPEN_NETWORK, no baked-in MASTER_KEY).
    expect(env).not.toMatch(/ALLOW_OPEN_NETWORK|MASTER_KEY/);
    expect(inFinal('VOLUME').map((i) => execForm(i.args))).toEqual([['/data']]);
  });

  it('follows the hadolint rules that apply (DL3000, DL3003, DL3009, DL3015, DL3020, DL4003, DL4004)', () => {
    expect(all('WORKDIR').every((workdir) => workdir.args.startsWith('/'))).toBe(true);
    expect(all('ADD')).toEqual([]);
    for (const stage of new Set(instructions.map((i) => i.stage))) {
      expect(instructions.filter((i) => i.stage === stage && ['CMD', 'ENTRYPOINT'].includes(i.keyword)).length).toBeLessThanOrEqual(1);
    }
    for (const run of all('RUN')) {
      expect(run.args, `line ${run.line}`).not.toMatch(/(^|&&|;)\s*cd /);
      expect(run.args, `line ${run.line}`).not.toMatch(/\bsudo\b/);
      if (run.args.includes('apt-get install')) {
        expect(run.args).toContain('--no-install-recommends');
        expect(run.args).toMatch(/apt-get install -y/);
        expect(run.args).toContain('rm -rf /var/lib/apt/lists/*');
      }
    }
  });

  it('copies only files that exist and that .dockerignore lets into the context', () => {
    const dockerignore = join(root, '.dockerignore');
    for (const copy of all('COPY').filter((i) => !i.args.startsWith('--from='))) {
      const sources = copy.args
        .split(' ')
        .filter((part) => !part.startsWith('--'))
        .slice(0, -1);
      for (const source of sources) {
        expect(existsSync(join(root, source)), source).toBe(true);
        expect(dockerignoreIncludes(dockerignore, source), `${source} is in the build context`).toBe(true);
      }
    }
    expect(dockerignoreIncludes(dockerignore, 'src/main.ts')).toBe(true);
    for (const excluded of [
      'node_modules/x',
      'dist/main.js',
      'test/e2e/demo.test.ts',
      'data/gateway.db',
      '.git/HEAD',
      'src/demo/x.test.ts',
    ]) {
      expect(dockerignoreIncludes(dockerignore, excluded), excluded).toBe(false);
    }
  });
});

interface Diagnostic {
  severity?: number;
  code?: string | number;
  message: string;
  range: { start: { line: number } };
}

/** dockerfile-utils' `validate` (the Docker language server's linter); null when the package is not installed. */
async function dockerfileLinter(): Promise<((content: string) => Diagnostic[]) | null> {
  const specifier = 'dockerfile-utils';
  try {
    const loaded = (await import(/* @vite-ignore */ specifier)) as { validate?: (content: string) => Diagnostic[] };
    return loaded.validate ?? null;
  } catch {
    return null;
  }
}

const lint = await dockerfileLinter();

describe.skipIf(lint === null)('Dockerfile linted by dockerfile-utils (the Docker language server linter)', () => {
  it('reports nothing, errors or warnings', () => {
    const diagnostics = lint?.(readFileSync(join(root, 'Dockerfile'), 'utf8')) ?? [];
    expect(diagnostics.map((diagnostic) => `line ${diagnostic.range.start.line + 1}: ${diagnostic.message}`)).toEqual([]);
  });

  it('the linter can fail: a second CMD and a bad EXPOSE are reported', () => {
    const messages = (lint?.('FROM node:20\nEXPOSE abc\nCMD ["a"]\nCMD ["b"]\n') ?? []).map((diagnostic) => diagnostic.message);
    expect(messages.join('\n')).toMatch(/only be one CMD/);
    expect(messages.join('\n')).toMatch(/Invalid containerPort/);
  });
});
