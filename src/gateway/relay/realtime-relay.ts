import type { IncomingMessage } from 'node:http';
import { WebSocket, type RawData } from 'ws';
import { providerError } from '../../errors/gateway-error.ts';
import { mapUpstreamError } from '../../providers/upstream-errors.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { RequestContext } from '../request-context.ts';
import type { RealtimeUsage } from './realtime-usage.ts';

/** The largest frame relayed either way (audio chunks are far smaller). */
export const maxFramePayload = 16 * 1024 * 1024;
/** Above this many bytes waiting on one side, the other side is paused. */
const highWaterBytes = 4 * 1024 * 1024;
const maximumErrorBody = 64 * 1024;

/** The instance's realtime WebSocket URL: `{base_url}/realtime` with http(s) turned into ws(s). */
export function realtimeUrl(baseUrl: string, query: URLSearchParams): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/realtime`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.search = query.toString();
  return url.toString();
}

export interface UpstreamSessionOptions {
  /** The client's query without the gateway's `provider` hint; `model` is set to the target's. */
  query: URLSearchParams;
  /** Headers for the upstream besides the instance's credentials (e.g. `OpenAI-Beta`). */
  headers: Record<string, string>;
  handshakeTimeoutMs: number;
}

/**
 * Opens the upstream session for one target. An HTTP answer instead of the upgrade maps to
 * the upstream error of CONTRACT 4 (so 5xx and 429 fail over); a connection failure is 502.
 */
export function connectUpstream(target: ResolvedTarget, options: UpstreamSessionOptions, context: RequestContext): Promise<WebSocket> {
  const provider = target.adapter.name;
  const query = new URLSearchParams(options.query);
  query.set('model', target.model);
  const url = target.adapter.realtimeUrl?.(query) ?? realtimeUrl(target.adapter.baseUrl, query);
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, {
      headers: { ...options.headers, ...target.adapter.credentialHeaders() },
      handshakeTimeout: options.handshakeTimeoutMs,
      maxPayload: maxFramePayload,
      perMessageDeflate: false,
    });
    const abort = (): void => socket.terminate();
    context.signal.addEventListener('abort', abort, { once: true });
    const settle = (): void => context.signal.removeEventListener('abort', abort);
    // Paused until the client side is upgraded too, so that no early event is lost.
    socket.once('open', () => (settle(), socket.pause(), resolve(socket)));
    socket.once('unexpected-response', (request, response) => {
      settle();
      void readErrorBody(response).then((body) => {
        request.destroy();
        reject(mapUpstreamError(response.statusCode ?? 502, body, provider, response.headers));
      });
    });
    socket.once('error', (error) => {
      settle();
      const timedOut = /handshake has timed out/i.test(error.message);
      reject(
        providerError(`upstream ${provider} ${timedOut ? 'did not answer in time' : `could not be reached: ${error.message}`}`, {
          provider,
          status: timedOut ? 504 : 502,
          code: timedOut ? 'upstream_timeout' : 'upstream_unreachable',
          cause: error,
        }),
      );
    });
  });
}

async function readErrorBody(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size > maximumErrorBody) break;
    }
  } catch {
    // A broken error body still leaves the status to report.
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface SessionEnd {
  /** Which side ended the session. */
  by: 'client' | 'upstream';
  code: number;
}

/**
 * Relays frames both ways, text and binary as they came, until either side closes; the
 * other side is then closed with the same code and reason. Upstream text frames are shown
 * to `usage`. Resolves when both sockets are closed. The upstream comes paused from
 * connectUpstream and is resumed here.
 */
export function relaySession(client: WebSocket, upstream: WebSocket, usage: RealtimeUsage): Promise<SessionEnd> {
  forward(client, upstream);
  forward(upstream, client, (data, isBinary) => {
    if (!isBinary) usage.observe(data as Buffer);
  });
  return new Promise((resolve) => {
    let end: SessionEnd | null = null;
    let open = 2;
    const closed = (by: SessionEnd['by'], other: WebSocket) => (code: number, reason: Buffer) => {
      end ??= { by, code };
      closeWith(other, code, reason);
      open -= 1;
      if (open === 0) resolve(end);
    };
    client.once('close', closed('client', upstream));
    upstream.once('close', closed('upstream', client));
    // An error is followed by 'close'; the other side is closed from there.
    client.on('error', () => client.terminate());
    upstream.on('error', () => upstream.terminate());
    upstream.resume();
  });
}

/** Sends every frame of `from` to `to`, pausing `from` while `to` has too much queued. */
function forward(from: WebSocket, to: WebSocket, observe?: (data: RawData, isBinary: boolean) => void): void {
  from.on('message', (data, isBinary) => {
    observe?.(data, isBinary);
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data, { binary: isBinary }, () => {
      if (from.isPaused && to.bufferedAmount < highWaterBytes / 2) from.resume();
    });
    if (to.bufferedAmount > highWaterBytes) from.pause();
  });
}

/** Closes a socket with a code a peer may send (1005 and 1006 are only ever received). */
function closeWith(socket: WebSocket, code: number, reason: Buffer): void {
  if (socket.readyState === WebSocket.CLOSED || socket.readyState === WebSocket.CLOSING) return;
  if (socket.readyState === WebSocket.CONNECTING) {
    socket.terminate();
    return;
  }
  const sendable = (code >= 1000 && code <= 1014 && ![1004, 1005, 1006].includes(code)) || (code >= 3000 && code <= 4999);
  const fallback = code === 1005 ? 1000 : 1011;
  socket.close(sendable ? code : fallback, sendable ? reason.subarray(0, 123) : undefined);
}
