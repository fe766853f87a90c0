import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { registerFeatureRoutes } from '../../admin/admin-errors.ts';
import type { BudgetService } from '../../budgets/budget-service.ts';
import { toGatewayError } from '../../errors/envelope.ts';
import { invalidRequest, notFound, permissionError } from '../../errors/gateway-error.ts';
import type { ToolDiscoveryMode } from '../../mcp/mcp-definitions.ts';
import { jsonRpcCodes, jsonRpcError, requestIdOf } from '../../mcp/jsonrpc-errors.ts';
import type { McpGateway } from '../../mcp/mcp-gateway.ts';
import { endpointKey } from '../../mcp/mcp-registry.ts';
import type { McpSession, SessionBinding } from '../../mcp/mcp-sessions.ts';
import type * as SessionOpening from '../../mcp/session-open.ts';
import { canonicalMcpName } from '../../mcp/mcp-validation.ts';
import { noAdmission, type Admission, type RateLimiter } from '../../ratelimit/rate-limiter.ts';

/** The MCP server SDK, loaded on the first /mcp request rather than at start-up. */
let sessionOpening: Promise<typeof SessionOpening> | null = null;

function loadSessionOpening(): Promise<typeof SessionOpening> {
  sessionOpening ??= import('../../mcp/session-open.ts');
  return sessionOpening;
}

export interface McpRouteDependencies {
  /** Null when MCP_ENABLED is off: every /mcp route then answers 503 `feature_unavailable`. */
  mcp: McpGateway | null;
  limiter: RateLimiter | null;
  budgets: BudgetService | null;
}

/**
 * `/mcp` (every server, namespaced) and `/mcp/{name}` over MCP Streamable HTTP (POST, GET, DELETE),
 * registered inside the /v1 authentication scope so that credentials and user paths work exactly as
 * on model endpoints (ADR 0010).
 */
export function registerMcpRoutes(app: FastifyInstance, dependencies: McpRouteDependencies): void {
  const { mcp } = dependencies;
  registerFeatureRoutes(app, { enabled: mcp !== null, name: 'the MCP gateway', setting: 'MCP_ENABLED' }, (scope) => {
    const handler = async (request: FastifyRequest<{ Params: { name?: string } }>, reply: FastifyReply) => {
      if (mcp !== null) await serveMcp(mcp, dependencies, request, reply);
    };
    scope.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', handler });
    scope.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp/:name', handler });
    if (mcp === null) return;
    // Notification streams (GET) never end on their own: end them when the server drains, so that
    // shutdown does not wait for its timeout. POSTs in flight finish normally.
    scope.addHook('preClose', (done) => {
      mcp.sessions.endStreams();
      done();
    });
  });
}

async function serveMcp(
  mcp: McpGateway,
  dependencies: McpRouteDependencies,
  request: FastifyRequest<{ Params: { name?: string } }>,
  reply: FastifyReply,
): Promise<void> {
  checkOrigin(mcp, request);
  const { openSession, startsSession } = await loadSessionOpening();
  const name = canonicalMcpName(request.params.name ?? '');
  const endpoint = mcp.registry.endpointFor(name, request.userPath);
  const binding: SessionBinding = { credential: credentialOf(request), userPath: request.userPath, endpoint: endpointKey(endpoint) };
  const sessionId = headerValue(request, 'mcp-session-id');
  let session: McpSession | null = null;
  if (sessionId !== undefined) {
    session = mcp.sessions.find(sessionId, binding) ?? null;
    const lastEventId = headerValue(request, 'last-event-id');
    if (session === null && request.method === 'GET' && lastEventId !== undefined) {
      // Resuming a session another replica holds (ADR 0034).
      const { heldElsewhere, replayForeignSession } = await import('../../mcp/foreign-replay.ts');
      if (await heldElsewhere(mcp.events, sessionId, binding)) {
        reply.hijack();
        return replayForeignSession(mcp.events, sessionId, lastEventId, reply.raw);
      }
    }
    if (session === null) throw notFound('unknown MCP session', { code: 'mcp_session_not_found', param: 'Mcp-Session-Id' });
  } else if (request.method !== 'POST' || !startsSession(request.body)) {
    throw invalidRequest('an Mcp-Session-Id header is required: start a session with an initialize request', {
      code: 'missing_field',
      param: 'Mcp-Session-Id',
    });
  }
  const admission = request.method === 'POST' ? admit(dependencies, request.userPath) : noAdmission;
  const held = await admission;
  reply.raw.once('close', () => held.release());
  const transport = session?.transport ?? (await openSession(mcp, binding, name, discoveryOverride(request)));
  reply.hijack();
  reply.raw.setHeader('x-request-id', request.id);
  for (const [header, value] of Object.entries(held.headers)) reply.raw.setHeader(header, value);
  await transport.handleRequest(request.raw, reply.raw, request.body).catch((error: unknown) => {
    request.log.error({ request_id: request.id, err: error }, 'mcp request failed');
    if (reply.raw.headersSent) return void reply.raw.end();
    // The request reached its session: the client expects a JSON-RPC answer.
    const gatewayError = toGatewayError(error);
    const answer = jsonRpcError(requestIdOf(request.body), jsonRpcCodes.internalError, gatewayError.message);
    reply.raw.writeHead(gatewayError.status, { 'content-type': 'application/json; charset=utf-8' });
    reply.raw.end(JSON.stringify(answer));
  });
}

/** Each POST counts one request on the user path's rules (never provider or model rules) and checks budgets. */
async function admit(dependencies: McpRouteDependencies, userPath: string): Promise<Admission> {
  const admission = (await dependencies.limiter?.admit({ userPath }, { routeRules: false })) ?? noAdmission;
  try {
    dependencies.budgets?.check(userPath);
  } catch (error) {
    admission.refund();
    throw error;
  }
  return admission;
}

/**
 * DNS rebinding protection (mcp/request-guard.ts): a Host the gateway is not reached by, or a browser
 * Origin it does not accept, is refused before anything else.
 */
function checkOrigin(mcp: McpGateway, request: FastifyRequest): void {
  const host = headerValue(request, 'host');
  if (!mcp.guard.hostAllowed(host)) {
    throw permissionError(`host ${host ?? '(none)'} is not allowed to call /mcp (MCP_ALLOWED_HOSTS)`, { code: 'mcp_host_not_allowed' });
  }
  const origin = headerValue(request, 'origin');
  if (origin === undefined || mcp.guard.originAllowed(origin)) return;
  throw permissionError(`origin ${origin} is not allowed to call /mcp (MCP_ALLOWED_ORIGINS)`, { code: 'origin_not_allowed' });
}

function credentialOf(request: FastifyRequest): string {
  const { principal } = request;
  if (principal.kind === 'jwt') return `jwt:${principal.subject ?? ''}`;
  return principal.kind === 'api_key' ? `api_key:${principal.keyId ?? ''}` : principal.kind;
}

/** `X-MCP-Tool-Discovery: search|off` at initialize overrides the endpoint's mode for the session. */
function discoveryOverride(request: FastifyRequest): ToolDiscoveryMode | null {
  const value = headerValue(request, 'x-mcp-tool-discovery')?.trim().toLowerCase();
  return value === 'search' || value === 'off' ? value : null;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
