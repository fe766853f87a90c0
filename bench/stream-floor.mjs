// A bare stream relay, the floor under the gateway's chat stream relay (ADR 0024): a node:http
// server that sends the request body to OPENAI_BASE_URL's /chat/completions through an undici
// Pool and writes each upstream chunk to the client untouched (no auth, parsing, stamping,
// usage or log). Runs as a gateway entry of bench/paired.ts:
// BENCH_STREAM=true BENCH_PAIR='{"floor":{"__ENTRY":"bench/stream-floor.mjs"},"gateway":{}}' npx tsx bench/paired.ts
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import process from 'node:process';
import { URL } from 'node:url';
import { Pool } from 'undici';

const base = new URL(process.env.OPENAI_BASE_URL ?? 'http://127.0.0.1:9001/v1');
const path = `${base.pathname.replace(/\/$/, '')}/chat/completions`;
const headers = { 'content-type': 'application/json', authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ''}` };
const pool = new Pool(base.origin, { connections: 64 });

const server = createServer((request, response) => {
  if (request.url === '/health') return void response.end('ok');
  const parts = [];
  request.on('data', (part) => parts.push(part));
  request.on('end', () => {
    pool.dispatch(
      { path, method: 'POST', headers, body: Buffer.concat(parts) },
      {
        onRequestStart() {},
        onResponseStart(_controller, status) {
          response.writeHead(status, { 'content-type': 'text/event-stream; charset=utf-8' });
        },
        onResponseData(_controller, chunk) {
          response.write(chunk);
        },
        onResponseEnd() {
          response.end();
        },
        onResponseError(_controller, error) {
          response.destroy(error);
        },
      },
    );
  });
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
