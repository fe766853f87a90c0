import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build, type Plugin } from 'esbuild';

// The start-up bundle (ADR 0016), run by `npm run build` after tsc: src/main.ts and everything
// it imports, packages included, become dist/main.js (a boot file, see `boot` below),
// dist/chunks/main-*.js and its shared chunks, plus the chunks in dist/chunks/ that only
// dynamic imports load (the packages a configuration may not use stay lazy). Node then reads a
// handful of files at start instead of about 1,300. tsc's output stays beside it: the SQLite
// writer thread and the demo run from it. dist/chunks/inputs.json lists each output file's
// inputs, for test/e2e/lazy-start.test.ts.

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const chunks = join(dist, 'chunks');

/**
 * Native addons, WASM packages (re2-wasm reads re2.wasm beside itself) and optional drivers stay in node_modules, loaded by Node's own require; so do
 * fastify's schema compilers, which no route uses (src/http/schema-compilers.ts, ADR 0025).
 */
const external = ['better-sqlite3', 'pg-native', 're2-wasm', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'];

/** The bundle is ESM; the CommonJS packages inside it call `require` for Node's built-ins. */
const banner = "import { createRequire as __gatewayRequire } from 'node:module'; const require = __gatewayRequire(import.meta.url);";

/**
 * zod re-exports all its ~50 error-message locales as `z.locales` (about 300 KB of the eager
 * bundle, more than half of zod), and esbuild cannot drop a namespace re-export. The gateway
 * keeps zod's default, English (which zod installs itself from locales/en.js); nothing here or
 * in the bundled packages reads `z.locales`, so in the bundle it holds `en` alone (ADR 0025).
 */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, ({ importer }) =>
      /[\\/]zod[\\/]v4[\\/]/.test(importer)
        ? { path: join(importer, '..', '..', 'locales', 'index.js'), namespace: 'zod-locales' }
        : undefined,
    );
    plugin.onLoad({ filter: /.*/, namespace: 'zod-locales' }, ({ path }) => ({
      contents: `export { default as en } from ${JSON.stringify(join(path, '..', 'en.js'))};`,
      resolveDir: join(path, '..'),
      loader: 'js',
    }));
  },
};

/**
 * dist/main.js is a two-line start: it imports src/lifecycle/heap-policy.ts, then imports
 * src/main.ts dynamically. In a split ESM bundle every shared chunk that main.ts needs (zod,
 * undici, ...) is a static import of the entry and is evaluated before the entry's own code, so
 * with src/main.ts as the entry the heap flags were set only after about 100 ms of loading and
 * four scavenges, too late to keep the young generation from growing (ADR 0025). Evaluated as
 * the entry's only static import, the policy runs before anything else of the gateway loads.
 */
const bootEntry = 'gateway-boot';
const boot: Plugin = {
  name: 'gateway-boot',
  setup(plugin) {
    plugin.onResolve({ filter: new RegExp(`^${bootEntry}$`) }, () => ({ path: bootEntry, namespace: bootEntry }));
    plugin.onLoad({ filter: /.*/, namespace: bootEntry }, () => ({
      contents: [
        `import ${JSON.stringify(join(root, 'src', 'lifecycle', 'heap-policy.ts'))};`,
        `await import(${JSON.stringify(join(root, 'src', 'main.ts'))});`,
      ].join('\n'),
      resolveDir: root,
      loader: 'ts',
    }));
  },
};

rmSync(chunks, { recursive: true, force: true });
mkdirSync(chunks, { recursive: true });
const result = await build({
  entryPoints: { main: bootEntry },
  outdir: dist,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  plugins: [boot, zodEnglishOnly],
  banner: { js: banner },
  // Fewer bytes for V8 to read and scan at start (identifiers are kept: names stay readable).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});
const inputs = Object.fromEntries(
  Object.entries(result.metafile.outputs)
    .filter(([output]) => output.endsWith('.js'))
    .map(([output, { inputs: used }]) => [relative(dist, join(root, output)), Object.keys(used)]),
);
writeFileSync(join(chunks, 'inputs.json'), `${JSON.stringify(inputs)}\n`);
