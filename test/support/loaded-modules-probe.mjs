// Preloaded into a gateway (NODE_OPTIONS=--import) by test/e2e/lazy-start.test.ts: on exit it
// writes every module the process loaded (ES modules seen by a loader hook, CommonJS from
// require.cache), one a line, to LOADED_MODULES_FILE.
import { writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import process from 'node:process';
import { MessageChannel } from 'node:worker_threads';

const loaded = new Set();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => loaded.add(url));
port1.unref();
const hooks = `
let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) { port.postMessage(url); return next(url, context); }
`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { port: port2 }, transferList: [port2] });

const require = createRequire(import.meta.url);
process.once('exit', () => {
  const file = process.env.LOADED_MODULES_FILE;
  if (file) writeFileSync(file, [...loaded, ...Object.keys(require.cache)].join('\n'));
});
