import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ConfigError } from '../errors/config-error.ts';
import type { GuardrailEntry } from '../guardrails/guardrail-settings.ts';
import { invalidRequest, notFound } from '../errors/gateway-error.ts';
import type { StoredGuardrail, StoredGuardrails } from '../guardrails/stored-guardrails.ts';
import { invalidParameter, isoTime, objectBody } from './admin-errors.ts';
import { keepRedactedSecret, keepRedactedUrl, redacted, redactUrlSecrets } from './redacted-secret.ts';

/** A guardrail as its YAML entry reads (defaults filled, no webhook secret), with its place and origin. */
export function renderGuardrail(entry: StoredGuardrail, position: number) {
  const spec = shownEntry(entry.settings.entry);
  return {
    ...spec,
    // A webhook URL's credential-like query values are secrets too.
    ...('url' in spec && typeof spec.url === 'string' ? { url: redactUrlSecrets(spec.url) } : {}),
    position,
    origin: entry.origin,
    managed: entry.origin === 'manual',
    created_at: isoTime(entry.createdAt),
    updated_at: isoTime(entry.updatedAt),
  };
}

/** The validated entry, a webhook's `secret` shown as `secret_set` in its place. */
function shownEntry(entry: GuardrailEntry): Record<string, unknown> {
  if (entry.type !== 'webhook') return entry;
  const { secret, timeout_ms, retries, fail_open, ...head } = entry;
  return { ...head, secret_set: secret !== undefined, timeout_ms, retries, fail_open };
}

/** Fields of a view that a PUT ignores, so that what GET returned may be sent back as is. */
const viewFields = ['position', 'origin', 'managed', 'created_at', 'updated_at', 'secret_set'];

/**
 * `GET|PUT|DELETE /admin/guardrails` and `GET /admin/guardrails/{name}`, shaped like
 * /admin/failover-rules: GET lists every guardrail in evaluation order, PUT upserts one by
 * `name` (the YAML schema; 400 naming the field) and answers it, DELETE removes one by `name`
 * (body or query) and answers the remaining list. Configuration ones answer 409 `guardrail_read_only`.
 */
export function registerGuardrailRoutes(app: FastifyInstance, guardrails: StoredGuardrails): void {
  const list = () => guardrails.list().map(renderGuardrail);

  app.get('/admin/guardrails', async () => list());

  app.get('/admin/guardrails/:name', async (request) => {
    const { name } = request.params as { name: string };
    const listed = guardrails.list();
    const index = listed.findIndex((entry) => entry.name === name);
    const entry = listed[index];
    if (entry === undefined) throw notFound(`no guardrail named ${name}`, { code: 'guardrail_not_found', param: 'name' });
    return renderGuardrail(entry, index);
  });

  app.put('/admin/guardrails', async (request) => {
    const input = keepWebhookSecret(
      Object.fromEntries(Object.entries(objectBody(request.body)).filter(([field]) => !viewFields.includes(field))),
      guardrails,
    );
    let entry: StoredGuardrail;
    try {
      entry = await guardrails.put(input);
    } catch (error) {
      if (error instanceof ConfigError) throw invalidParameter(error.key, error.message.replace(/^invalid configuration: /, ''));
      throw error;
    }
    return renderGuardrail(
      entry,
      guardrails.list().findIndex((listed) => listed.name === entry.name),
    );
  });

  app.delete('/admin/guardrails', async (request) => {
    await guardrails.delete(nameToDelete(request));
    return list();
  });
}

/**
 * A webhook's `secret: "***"` keeps the stored secret while the webhook's origin is unchanged
 * (else 400 `secret_required`): the signing secret never follows a new URL (ADR 30). So do the
 * secrets a view redacted in its URL (`keepRedactedUrl`).
 */
function keepWebhookSecret(input: Record<string, unknown>, guardrails: StoredGuardrails): Record<string, unknown> {
  if (input['type'] !== 'webhook') return input;
  const stored = typeof input['name'] === 'string' ? guardrails.find(input['name'].trim()) : undefined;
  const webhook = stored?.origin === 'manual' && stored.settings.type === 'webhook' ? stored.settings : null;
  const url = typeof input['url'] === 'string' ? keepRedactedUrl(input['url'], webhook?.url ?? null) : null;
  const kept = url === null ? input : { ...input, url };
  if (input['secret'] !== redacted) return kept;
  const secret = keepRedactedSecret('secret', redacted, url, { url: webhook?.url ?? null, value: webhook?.secret ?? undefined });
  return { ...kept, secret };
}

/** `?name=` when given, else `name` of the JSON body. */
function nameToDelete(request: FastifyRequest): string {
  const query = request.query as Record<string, unknown>;
  const name = query['name'] !== undefined ? query['name'] : objectBody(request.body)['name'];
  if (typeof name !== 'string' || name.trim() === '') {
    throw invalidRequest('name is required (in the body or the query)', { code: 'missing_field', param: 'name' });
  }
  return name.trim();
}
