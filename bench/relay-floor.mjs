// A bare non-streaming relay, the floor under the gateway's added latency at c=1 (issue 18): a
// node:http server that sends the request body to OPENAI_BASE_URL's /chat/completions through an
// undici Pool, reads the whole answer into one buffer and ends the client's response with it (no
// auth, parsing, routing, usage or log). What Node costs here for one extra hop. An upstream
// answer of type text/event-stream is relayed as it comes instead, each upstream read written on
// untouched (as bench/stream-floor.mjs does), so `BENCH_GATEWAY_ENTRY=bench/relay-floor.mjs npm run
// bench` gives the floor of every row of issue 18's table in the bench's own harness. Runs as an entry
// of bench/paired-latency.ts (BENCH_SIDES='{"floor":{"__ENTRY":"bench/relay-floor.mjs"},...}') or
// of bench/paired.ts, like bench/stream-floor.mjs.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import process from 'node:process';
import { URL } from 'node:url';
import { Pool } from 'undici';

const base = new URL(process.env.OPENAI_BASE_URL ?? 'http://127.0.0.1:9001/v1');
const path = `${base.pathname.replace(/\/$/, '')}/chat/completions`;
const headers = { 'content-type': 'application/json', authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ''}` };
const pool = new Pool(base.origin, { connections: 64 });

function relay(body, response) {
  const parts = [];
  let status = 502;
  let streaming = false;
  pool.dispatch(
    { path, method: 'POST', headers, body },
    {
      onRequestStart() {},
      onResponseStart(_controller, statusCode, headers) {
        status = statusCode;
        streaming = String(headers['content-type'] ?? '').startsWith('text/event-stream');
        if (streaming) response.writeHead(status, { 'content-type': 'text/event-stream; charset=utf-8' });
      },
      onResponseData(_controller, chunk) {
        if (streaming) response.write(chunk);
        else parts.push(chunk);
      },
      onResponseEnd() {
        if (streaming) return void response.end();
        const answer = Buffer.concat(parts);
        response.writeHead(status, { 'content-type': 'application/json', 'content-length': answer.length });
        response.end(answer);
      },
      onResponseError(_controller, error) {
        response.destroy(error);
      },
    },
  );
}

const server = createServer((request, response) => {
  if (request.url === '/health') return void response.end('ok');
  const parts = [];
  request.on('data', (part) => parts.push(part));
  request.on('end', () => relay(Buffer.concat(parts), response));
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
