import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { userPathCovers } from '../core/user-path.ts';
import type { GuardrailSettings } from './guardrail-settings.ts';
import type { ChatRequestBody } from '../providers/provider.ts';
import type { RequestTrail } from '../request-log/request-trail.ts';
import { guardrailBlocked } from './blocked.ts';
import { buildGuardrail, type CustomFinders, type Instances } from './build.ts';
import { chatTexts, mapAnswerTexts, mapChatTexts } from './chat-texts.ts';
import { loadCustomFinders } from './custom.ts';
import { requestedSchema, schemaViolation } from './json-schema.ts';
import { guardStream } from './stream-guard.ts';
import { redact, scan, scanAsync } from './text-scan.ts';
import type { Guardrail, GuardrailScope, Span, TextGuardrail } from './types.ts';

export type Stage = 'input' | 'output';

/** The request a decision is made for: its id, and its request log trail when the log is on. */
export interface DecisionContext {
  readonly requestId: string;
  readonly trail?: RequestTrail | null;
}

/** Where decisions go: the log lines, the request log entry, and the metrics when they are on. */
type Report = (decision: GuardrailDecision, context: DecisionContext) => void;

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
 * The guardrails in force, in order. `select` picks the ones in scope of a request once; null
 * when none applies, so a gateway without guardrails does no work at all. `replace` swaps the
 * list in one step (admin API, hot reload): a request keeps the list it selected from.
 */
export class Guardrails {
  private plan: Plan = planOf([]);
  private readonly report: Report;
  private readonly instances: Instances;

  private constructor(report: Report, instances: Instances) {
    this.report = report;
    this.instances = instances;
  }

  /**
   * An empty pipeline: every decision is logged, recorded in the request's log entry, and
   * counted when metrics are on. `instances` serve `moderation` guardrails.
   */
  static open(logger: Logger, metrics: DecisionCounter | null = null, instances: Instances = new Map()): Guardrails {
    const report: Report = (decision, context) => {
      if (logger.isLevelEnabled('info')) {
        const message = decision.mode === 'monitor' ? 'guardrail would act (monitor mode)' : 'guardrail acted';
        logger.info({ request_id: context.requestId, guardrail: decision }, message);
      }
      const trail = context.trail;
      if (trail) {
        const { guardrail: name, type, action, mode, stage } = decision;
        (trail.guardrails ??= []).push({ name, type, action, mode, stage });
      }
      metrics?.countGuardrail(decision);
    };
    return new Guardrails(report, instances);
  }

  /** Null when none is configured; `custom` modules are loaded first (a failure stops start-up). */
  static async create(
    settings: readonly GuardrailSettings[],
    logger: Logger,
    metrics: DecisionCounter | null = null,
    instances: Instances = new Map(),
  ): Promise<Guardrails | null> {
    if (settings.length === 0) return null;
    const guardrails = Guardrails.open(logger, metrics, instances);
    guardrails.replace(settings, await loadCustomFinders(settings));
    return guardrails;
  }

  /** Builds every guardrail first, then swaps: a bad entry throws and leaves the list in force. */
  replace(settings: readonly GuardrailSettings[], custom: CustomFinders): void {
    this.plan = planOf(settings.map((entry) => buildGuardrail(entry, custom, this.instances)));
  }

  get size(): number {
    return this.plan.guardrails.length;
  }

  select(userPath: string, model: string, endpoint: string, context: DecisionContext): ActiveGuardrails | null {
    const plan = this.plan;
    const list = plan.guardrails;
    if (list.length === 0) return null;
    let count = 0;
    for (const guardrail of list) if (inScope(guardrail.scope, userPath, model, endpoint)) count++;
    if (count === 0) return null;
    // Every guardrail in scope (the usual case): the plan made when the list was built.
    const active = count === list.length ? plan : planOf(list.filter((guardrail) => inScope(guardrail.scope, userPath, model, endpoint)));
    return new ActiveGuardrails(active, this.report, context);
  }
}

/** Guardrails in order, and those of them that read JSON answers and streams, picked out once. */
interface Plan {
  readonly guardrails: readonly Guardrail[];
  readonly outputs: readonly TextGuardrail[];
}

function planOf(guardrails: readonly Guardrail[]): Plan {
  return {
    guardrails,
    outputs: guardrails.filter((guardrail): guardrail is TextGuardrail => guardrail.kind === 'text' && guardrail.output),
  };
}

function parseAnswer(body: string): Record<string, unknown> | null {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function inScope(scope: GuardrailScope, userPath: string, model: string, endpoint: string): boolean {
  return (
    (scope.endpoints.length === 0 || scope.endpoints.includes(endpoint)) &&
    (scope.models.length === 0 || scope.models.includes(model)) &&
    (scope.userPaths.length === 0 || scope.userPaths.some((path) => userPathCovers(path, userPath)))
  );
}

/** The guardrails of one request: its input, its JSON answer, its stream. */
export class ActiveGuardrails {
  private readonly guardrails: readonly Guardrail[];
  private readonly outputs: readonly TextGuardrail[];
  private readonly report: Report;
  private readonly context: DecisionContext;
  /** The JSON schema the request asked for, when a json_schema guardrail is in scope. */
  private schema: Record<string, unknown> | null = null;

  constructor(plan: Plan, report: Report, context: DecisionContext) {
    this.guardrails = plan.guardrails;
    this.outputs = plan.outputs;
    this.report = report;
    this.context = context;
  }

  /** The request as it may go upstream (redacted), or a GatewayError `guardrail_blocked`. */
  async input(body: ChatRequestBody): Promise<ChatRequestBody> {
    let current = body;
    for (const guardrail of this.guardrails) {
      if (guardrail.kind === 'schema') this.schema = requestedSchema(body);
      else if (guardrail.kind === 'request') {
        const reason = await guardrail.check(current);
        if (reason !== null) this.decide(guardrail, 'block', 'input', reason);
      } else if (guardrail.input) current = await this.inputTexts(guardrail, current);
    }
    return current;
  }

  /** The request's texts through one text guardrail; a long search lets the event loop run (scanAsync). */
  private async inputTexts(guardrail: TextGuardrail, body: ChatRequestBody): Promise<ChatRequestBody> {
    if (guardrail.findAsync === undefined) return mapChatTexts(body, (text) => this.text(guardrail, text, 'input'));
    const found = new Map<string, Span[]>();
    for (const text of chatTexts(body)) if (!found.has(text)) found.set(text, await scanAsync(guardrail, text));
    return mapChatTexts(body, (text) => this.text(guardrail, text, 'input', found.get(text)));
  }

  /**
   * A chat completion JSON answer as the client may get it. `parsed`, when the caller has read
   * the answer already, is what `body` parses to or an answer with the same `choices` (before
   * the gateway added its `provider` field): guardrails read it, and `body` is parsed again
   * only when one of them changes a text.
   */
  output(body: string, parsed?: Record<string, unknown>): string {
    const outputs = this.outputs;
    if (outputs.length === 0 && this.schema === null) return body;
    let answer = parsed ?? parseAnswer(body);
    if (answer === null) return body; // not an answer: the caller's reader refuses it
    this.checkSchema(answer);
    let changed = false;
    for (const guardrail of outputs) {
      const mapped = mapAnswerTexts(answer, (text) => this.text(guardrail, text, 'output'));
      if (mapped !== null) {
        answer = mapped;
        changed = true;
      }
    }
    if (!changed) return body;
    const whole = parsed === undefined ? null : parseAnswer(body);
    return JSON.stringify(whole === null ? answer : { ...whole, choices: answer['choices'] });
  }

  /** A chat chunk stream (OpenAI SSE) as the client may get it; a block ends it with an error. */
  stream(body: Readable): Readable {
    const outputs = this.outputs;
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

  private text(guardrail: TextGuardrail, text: string, stage: Stage, found?: Span[]): string {
    const spans = found ?? scan(guardrail, text);
    if (spans.length === 0) return text;
    return this.decide(guardrail, guardrail.action, stage, spans[0]?.entity ?? 'match') ? redact(guardrail, text, spans) : text;
  }

  /** Logs the decision; throws when an enforced guardrail blocks; true when the text is to be redacted. */
  private decide(guardrail: Guardrail, action: 'redact' | 'block', stage: Stage, entity: string): boolean {
    const decision: GuardrailDecision = { guardrail: guardrail.name, type: guardrail.type, mode: guardrail.mode, action, stage, entity };
    this.report(decision, this.context);
    if (guardrail.mode === 'monitor') return false;
    if (action === 'block') throw guardrailBlocked(guardrail.name, guardrail.kind === 'text' ? `${entity} found` : entity, stage);
    return true;
  }
}
