// Preloaded (`node --import`) by scripts/mcp-conformance.ts when it runs the conformance CLI:
// the suite's bundle imports `globSync` from `fs`, which Node 20 lacks (added in Node 22). The
// suite uses it only in `tier-check`, never in `server`; on Node 20 the import gets a stub that
// throws, on later versions the real function.
import { register } from 'node:module';

const fsWithGlob = [
  "import fs from 'node:fs';",
  "export * from 'node:fs';",
  'export default fs;',
  "export const globSync = fs.globSync ?? (() => { throw new Error('fs.globSync needs Node 22 or later'); });",
].join('\n');

const hooks = `
const shim = ${JSON.stringify(`data:text/javascript,${encodeURIComponent(fsWithGlob)}`)};
export async function resolve(specifier, context, next) {
  const parent = context.parentURL ?? '';
  if ((specifier === 'fs' || specifier === 'node:fs') && parent.includes('conformance') && !parent.startsWith('data:')) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}`;

register(`data:text/javascript,${encodeURIComponent(hooks)}`);
