import { STATUS_CODES, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer } from 'ws';
import { renderEnvelope, toGatewayError } from '../../errors/envelope.ts';
import { GatewayError, invalidRequest, notFound } from '../../errors/gateway-error.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { runRelayedCall } from '../../gateway/endpoints/call-codec.ts';
import { realtimeCodec } from '../../gateway/endpoints/realtime.ts';
import type { StreamOutcome } from '../../gateway/run-model-request.ts';
import type * as Relay from '../../gateway/relay/realtime-relay.ts';
import { RealtimeUsage } from '../../gateway/relay/realtime-usage.ts';
import type { RequestContext } from '../../gateway/request-context.ts';
import type { Authenticator } from '../../auth/authenticator.ts';
import { assertEndpointAllowed } from '../../auth/allowlist.ts';
import { serveAsPlainHttp, wantsWebSocket } from '../plain-upgrade.ts';
import { requestIdFor } from '../request-id.ts';
import { resolveUserPath } from '../../auth/user-path-header.ts';

export interface RealtimeDependencies extends ChatPipelineDependencies {
  authenticator: Authenticator;
  userPathHeader: string;
  /** How long the upstream may take to accept the WebSocket upgrade. */
  handshakeTimeoutMs: number;
  logger: Logger;
}

const endpoint = '/v1/realtime';

interface RealtimeModules {
  relay: typeof Relay;
  Server: typeof WebSocketServer;
}

/** `ws` and the relay, loaded on the first upgrade rather than at start-up. */
let realtimeModules: Promise<RealtimeModules> | null = null;

function loadRealtime(): Promise<RealtimeModules> {
  realtimeModules ??= Promise.all([import('../../gateway/relay/realtime-relay.ts'), import('ws')]).then(([relay, ws]) => ({
    relay,
    Server: ws.WebSocketServer,
  }));
  return realtimeModules;
}

/** The subprotocol OpenAI's browser clients carry their key in. */
const keyProtocol = 'openai-insecure-api-key.';
const betaProtocol = 'openai-beta.realtime-v1';

/**
 * `GET /v1/realtime?model=...` (WebSocket): authenticated like /v1, routed by `model` like
 * chat, admitted as one request holding one concurrency slot for the whole session (user
 * path, provider and model rules, then the budget), relayed frame by frame to the
 * instance's `{base_url}/realtime`. Every refusal is an HTTP answer with the envelope,
 * before any upgrade. The session's usage is the sum of its `response.done` usages.
 */
export function registerRealtimeRelay(app: FastifyInstance, dependencies: RealtimeDependencies): void {
  /** Open sessions: client socket -> upstream socket. */
  const sessions = new Map<WebSocket, WebSocket>();
  const upgradeHeaders = new WeakMap<IncomingMessage, Record<string, string>>();
  const serverOf = lazyServer(upgradeHeaders);
  let closing = false;
  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!wantsWebSocket(request)) {
      serveAsPlainHttp(app.server, request, socket, head);
      return;
    }
    socket.on('error', () => socket.destroy());
    const requestId = requestIdFor(request);
    if (closing) {
      refuse(socket, new GatewayError('provider_error', 'the gateway is shutting down', { status: 503, code: 'shutting_down' }), requestId);
      return;
    }
    const open = (outcome: StreamOutcome<WebSocket>, server: WebSocketServer): void => {
      upgradeHeaders.set(request, { 'x-request-id': requestId, ...outcome.admission.headers });
      let started = false;
      // A handshake the WebSocket server refuses never starts a session: give everything back.
      socket.once('close', () => {
        if (started) return;
        outcome.result.terminate();
        outcome.admission.release();
        outcome.report(499, null);
      });
      server.handleUpgrade(request, socket, head, (client) => {
        started = true;
        sessions.set(client, outcome.result);
        void runSession(client, outcome, dependencies.logger, requestId).finally(() => sessions.delete(client));
      });
    };
    void serverOf()
      .then(async (server) => {
        const outcome = await admitSession(request, socket, requestId, dependencies);
        return outcome === null ? null : { outcome, server };
      })
      .then(
        (ready) => ready && open(ready.outcome, ready.server),
        (error: unknown) => {
          const gatewayError = toGatewayError(error);
          if (gatewayError.type === 'internal_error') dependencies.logger.error({ request_id: requestId, err: error }, 'unhandled error');
          refuse(socket, gatewayError, requestId);
          logRefusal(dependencies.logger, requestId, request, gatewayError.status);
        },
      );
  });
  // A plain GET (no Upgrade header) reaches Fastify: say what the endpoint expects.
  app.get(endpoint, async () => {
    throw invalidRequest('GET /v1/realtime is a WebSocket endpoint: send an Upgrade: websocket request', { code: 'invalid_body' });
  });
  // Sessions have no natural end: on shutdown they are told the gateway is going away.
  app.addHook('preClose', (done) => {
    closing = true;
    for (const [client, upstream] of sessions) {
      client.close(1001, 'the gateway is shutting down');
      upstream.close(1001, 'the gateway is shutting down');
    }
    done();
  });
}

/** The WebSocket server, created on the first upgrade (with `ws`, loaded then). */
function lazyServer(upgradeHeaders: WeakMap<IncomingMessage, Record<string, string>>): () => Promise<WebSocketServer> {
  let created: WebSocketServer | null = null;
  return async () => {
    const { relay, Server } = await loadRealtime();
    if (created !== null) return created;
    const server = new Server({ noServer: true, maxPayload: relay.maxFramePayload, perMessageDeflate: false, handleProtocols });
    server.on('headers', (lines, request) => {
      for (const [name, value] of Object.entries(upgradeHeaders.get(request) ?? {})) lines.push(`${name}: ${value}`);
    });
    created = server;
    return server;
  };
}

/**
 * Everything before the upgrade: route, credentials, user path, model, admission and the
 * upstream session. Resolves null when the client left meanwhile (all given back).
 */
async function admitSession(
  request: IncomingMessage,
  socket: Duplex,
  requestId: string,
  dependencies: RealtimeDependencies,
): Promise<StreamOutcome<WebSocket> | null> {
  const { relay } = await loadRealtime();
  const url = new URL(request.url ?? '/', 'http://gateway.invalid');
  if (url.pathname !== endpoint) throw notFound(`unknown route: ${request.method ?? 'GET'} ${url.pathname}`, { code: 'unknown_route' });
  if (request.method !== 'GET' || request.headers.upgrade?.toLowerCase() !== 'websocket' || !request.headers['sec-websocket-key']) {
    throw invalidRequest('expected a WebSocket upgrade request', { code: 'invalid_body' });
  }
  const controller = new AbortController();
  socket.once('close', () => controller.abort());
  const principal = await dependencies.authenticator.authenticateRequest(credentialsOf(request));
  assertEndpointAllowed(principal, 'GET', url.pathname);
  const userPath = resolveUserPath(principal.boundUserPath, request.headers[dependencies.userPathHeader]);
  const context: RequestContext = { requestId, principal, userPath, startedAt: performance.now(), signal: controller.signal };
  const selector = url.searchParams.get('model');
  if (selector === null || selector === '')
    throw invalidRequest('you must provide a model parameter', { code: 'missing_field', param: 'model' });
  const hint = url.searchParams.get('provider') ?? '';
  const query = new URLSearchParams(url.searchParams);
  query.delete('provider');
  const options = { query, headers: betaHeadersOf(request), handshakeTimeoutMs: dependencies.handshakeTimeoutMs };
  const outcome = await runRelayedCall(
    realtimeCodec,
    {
      selector,
      hint: hint === '' ? undefined : hint,
      stream: true,
      // One response's worth (the default output cap) is held for the session.
      body: {},
      call: (target) => relay.connectUpstream(target, options, context),
    },
    context,
    dependencies,
  );
  if (!controller.signal.aborted) return outcome;
  outcome.result.terminate();
  outcome.admission.release();
  outcome.report(499, null);
  return null;
}

/** Relays one upgraded session to its end, then gives its slot back and records its usage. */
async function runSession(client: WebSocket, outcome: StreamOutcome<WebSocket>, logger: Logger, requestId: string): Promise<void> {
  const usage = new RealtimeUsage();
  const { relay } = await loadRealtime();
  const end = await relay.relaySession(client, outcome.result, usage);
  outcome.admission.release();
  const broken = end.by === 'upstream' && ![1000, 1001, 1005].includes(end.code);
  outcome.report(broken ? 502 : 200, usage.summary());
  logger.info(
    {
      request_id: requestId,
      method: 'GET',
      url: endpoint,
      status: 101,
      provider: outcome.target.adapter.name,
      model: outcome.target.model,
      session_end: end.by === 'client' ? 'client_closed' : 'upstream_closed',
      close_code: end.code,
    },
    'realtime session ended',
  );
}

/** The client's credentials: its headers, else the key a browser carries in a subprotocol. */
function credentialsOf(request: IncomingMessage): IncomingHttpHeaders {
  if (request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined) return request.headers;
  const key = protocolsOf(request)
    .find((protocol) => protocol.startsWith(keyProtocol))
    ?.slice(keyProtocol.length);
  return key ? { ...request.headers, authorization: `Bearer ${key}` } : request.headers;
}

/** `OpenAI-Beta` for the upstream when the client asked for the beta interface (header or subprotocol). */
function betaHeadersOf(request: IncomingMessage): Record<string, string> {
  const header = request.headers['openai-beta'];
  if (typeof header === 'string' && header !== '') return { 'OpenAI-Beta': header };
  return protocolsOf(request).includes(betaProtocol) ? { 'OpenAI-Beta': 'realtime=v1' } : {};
}

function protocolsOf(request: IncomingMessage): string[] {
  const header = request.headers['sec-websocket-protocol'];
  return (header ?? '')
    .split(',')
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol !== '');
}

/** The subprotocol answered to a browser: `realtime` if offered, never the one carrying a key. */
function handleProtocols(protocols: Set<string>): string | false {
  if (protocols.has('realtime')) return 'realtime';
  return [...protocols].find((protocol) => !protocol.startsWith(keyProtocol)) ?? false;
}

/** Answers a refused upgrade with the envelope of CONTRACT 4 and closes the connection. */
function refuse(socket: Duplex, error: GatewayError, requestId: string): void {
  if (error.status === 499 || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(renderEnvelope(error));
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
    'x-request-id': requestId,
    ...error.headers,
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');
  socket.once('finish', () => socket.destroy());
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n${head}\r\n\r\n${body}`);
}

function logRefusal(logger: Logger, requestId: string, request: IncomingMessage, status: number): void {
  logger.info({ request_id: requestId, method: request.method, url: request.url?.split('?')[0], status }, 'request completed');
}
