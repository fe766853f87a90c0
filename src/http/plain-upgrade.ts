import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** Headers that only carry an upgrade offer (h2c's settings ride along with it). */
const upgradeOnly = new Set(['upgrade', 'http2-settings']);

/**
 * Whether an upgrade request asks for a WebSocket: anything else (`Upgrade: h2c`, sent by
 * `curl --http2` on every cleartext request) is an offer the server may ignore (RFC 9110
 * section 7.8).
 */
export function wantsWebSocket(request: IncomingMessage): boolean {
  return request.headers.upgrade?.toLowerCase() === 'websocket';
}

/**
 * Serves an upgrade request the gateway declines as the plain HTTP/1.1 request it also is.
 * Node hands every request that carries `Upgrade` to the server's 'upgrade' listeners, with
 * its parser already detached: the request head is written back, without the upgrade
 * offer, in front of the bytes that followed it (its body, later requests), and the socket
 * goes through the server's connection handling again, as if it had just connected.
 */
export function serveAsPlainHttp(server: Server, request: IncomingMessage, socket: Duplex, head: Buffer): void {
  const lines = [`${request.method ?? 'GET'} ${request.url ?? '/'} HTTP/${request.httpVersion}`];
  const raw = request.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] as string;
    const value = raw[index + 1] as string;
    const lower = name.toLowerCase();
    if (upgradeOnly.has(lower)) continue;
    if (lower === 'connection') {
      const tokens = value.split(',').map((token) => token.trim());
      const kept = tokens.filter((token) => token !== '' && !upgradeOnly.has(token.toLowerCase()));
      if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`);
      continue;
    }
    lines.push(`${name}: ${value}`);
  }
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
  server.emit('connection', socket);
}
