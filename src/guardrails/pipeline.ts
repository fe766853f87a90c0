import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { GuardrailSettings } from '../config/guardrails.ts';
import type { ChatRequestBody } from '../providers/provider.ts';
import { guardrailBlocked } from './blocked.ts';
import { buildGuardrail, type Instances } from './build.ts';
import { mapAnswerTexts, mapChatTexts } from './chat-texts.ts';
import { loadCustomFinders } from './custom.ts';
import { requestedSchema, schemaViolation } from './json-schema.ts';
import { guardStream } from './stream-guard.ts';
import { redact, scan } from './text-scan.ts';
import type { Guardrail, GuardrailScope, TextGuardrail } from './types.ts';

export type Stage = 'input' | 'output';

/** Where decisions go: the log, and the metrics when they are on. */
type Report = (decision: GuardrailDecision, requestId: string) => void;

export interface DecisionCounter {
  countGuardrail(decision: GuardrailDecision): void;
}

/** What the request log line of a decision carries. */
export interface GuardrailDecision {
  guardrail: string;
  type: string;
  mode: string;
  action: 'redact' | 'block';
  stage: Stage;
  entity: string;
}

/**
 * The configured guardrails, in declaration order. `select` picks the ones in scope of a
 * request once; null when none applies, so a gateway without guardrails does no work at all.
 */
export class Guardrails {
  private readonly list: readonly Guardrail[];
  private readonly report: Report;

  private constructor(list: readonly Guardrail[], report: Report) {
    this.list = list;
    this.report = report;
  }

  /**
   * Null when none is configured; `custom` modules are loaded first (a failure stops start-up).
   * Every decision is logged, and counted when metrics are on.
   */
  static async create(
    settings: readonly GuardrailSettings[],
    logger: Logger,
    metrics: DecisionCounter | null = null,
    instances: Instances = new Map(),
  ): Promise<Guardrails | null> {
    if (settings.length === 0) return null;
    const custom = await loadCustomFinders(settings);
    const report: Report = (decision, requestId) => {
      const message = decision.mode === 'monitor' ? 'guardrail would act (monitor mode)' : 'guardrail acted';
      logger.info({ request_id: requestId, guardrail: decision }, message);
      metrics?.countGuardrail(decision);
    };
    return new Guardrails(
      settings.map((entry) => buildGuardrail(entry, custom, instances)),
      report,
    );
  }

  select(userPath: string, model: string, endpoint: string, requestId: string): ActiveGuardrails | null {
    const active = this.list.filter((guardrail) => inScope(guardrail.scope, userPath, model, endpoint));
    return active.length === 0 ? null : new ActiveGuardrails(active, this.report, requestId);
  }
}

function inScope(scope: GuardrailScope, userPath: string, model: string, endpoint: string): boolean {
  return (
    (scope.endpoints.length === 0 || scope.endpoints.includes(endpoint)) &&
    (scope.models.length === 0 || scope.models.includes(model)) &&
    (scope.userPaths.length === 0 || scope.userPaths.some((path) => path === '/' || userPath === path || userPath.startsWith(`${path}/`)))
  );
}

/** The guardrails of one request: its input, its JSON answer, its stream. */
export class ActiveGuardrails {
  private readonly guardrails: readonly Guardrail[];
  private readonly report: Report;
  private readonly requestId: string;
  /** The JSON schema the request asked for, when a json_schema guardrail is in scope. */
  private schema: Record<string, unknown> | null = null;

  constructor(guardrails: readonly Guardrail[], report: Report, requestId: string) {
    this.guardrails = guardrails;
    this.report = report;
    this.requestId = requestId;
  }

  /** The request as it may go upstream (redacted), or a GatewayError `guardrail_blocked`. */
  async input(body: ChatRequestBody): Promise<ChatRequestBody> {
    let current = body;
    for (const guardrail of this.guardrails) {
      if (guardrail.kind === 'schema') this.schema = requestedSchema(body);
      else if (guardrail.kind === 'request') {
        const reason = await guardrail.check(current);
        if (reason !== null) this.decide(guardrail, 'block', 'input', reason);
      } else if (guardrail.input) current = mapChatTexts(current, (text) => this.text(guardrail, text, 'input'));
    }
    return current;
  }

  /** A chat completion JSON answer as the client may get it. */
  output(body: string): string {
    const outputs = this.textGuardrails('output');
    if (outputs.length === 0 && this.schema === null) return body;
    let answer: Record<string, unknown>;
    try {
      answer = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return body; // not an answer: the caller's reader refuses it
    }
    this.checkSchema(answer);
    let changed = false;
    for (const guardrail of outputs) {
      const mapped = mapAnswerTexts(answer, (text) => this.text(guardrail, text, 'output'));
      if (mapped !== null) {
        answer = mapped;
        changed = true;
      }
    }
    return changed ? JSON.stringify(answer) : body;
  }

  /** A chat chunk stream (OpenAI SSE) as the client may get it; a block ends it with an error. */
  stream(body: Readable): Readable {
    const outputs = this.textGuardrails('output');
    if (outputs.length === 0) return body;
    return guardStream(body, outputs, (guardrail, text, spans) => {
      const entity = spans[0]?.entity ?? 'match';
      return this.decide(guardrail, guardrail.action, 'output', entity) ? redact(guardrail, text, spans) : text;
    });
  }

  /** Each choice's content against the schema the request asked for (json_schema guardrails). */
  private checkSchema(answer: Record<string, unknown>): void {
    const schema = this.schema;
    if (schema === null) return;
    for (const guardrail of this.guardrails) {
      if (guardrail.kind !== 'schema') continue;
      mapAnswerTexts(answer, (text) => {
        const violation = schemaViolation(text, schema);
        if (violation !== null)
          this.decide(guardrail, 'block', 'output', `the answer does not match the requested JSON schema (${violation})`);
        return text;
      });
    }
  }

  private textGuardrails(stage: Stage): TextGuardrail[] {
    return this.guardrails.filter((guardrail): guardrail is TextGuardrail => guardrail.kind === 'text' && guardrail[stage]);
  }

  private text(guardrail: TextGuardrail, text: string, stage: Stage): string {
    const spans = scan(guardrail, text);
    if (spans.length === 0) return text;
    return this.decide(guardrail, guardrail.action, stage, spans[0]?.entity ?? 'match') ? redact(guardrail, text, spans) : text;
  }

  /** Logs the decision; throws when an enforced guardrail blocks; true when the text is to be redacted. */
  private decide(guardrail: Guardrail, action: 'redact' | 'block', stage: Stage, entity: string): boolean {
    const decision: GuardrailDecision = { guardrail: guardrail.name, type: guardrail.type, mode: guardrail.mode, action, stage, entity };
    this.report(decision, this.requestId);
    if (guardrail.mode === 'monitor') return false;
    if (action === 'block') throw guardrailBlocked(guardrail.name, guardrail.kind === 'text' ? `${entity} found` : entity, stage);
    return true;
  }
}
