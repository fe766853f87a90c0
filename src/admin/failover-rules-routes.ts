import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidRequest } from '../errors/gateway-error.ts';
import { FailoverRuleValidationError, parseFailoverRuleInput } from '../routing/failover-rule-validation.ts';
import type { FailoverRule, FailoverRules } from '../routing/failover-rules.ts';
import { invalidParameter, isoTime, objectBody } from './admin-errors.ts';
import type { AnswerOf, failoverRuleSchema } from './schemas/answers.ts';

export function renderFailoverRule(rule: FailoverRule): AnswerOf<typeof failoverRuleSchema> {
  return {
    model: rule.model,
    fallbacks: [...rule.fallbacks],
    on: [...rule.on],
    origin: rule.origin,
    created_at: isoTime(rule.createdAt),
    updated_at: isoTime(rule.updatedAt),
  };
}

/**
 * `GET|PUT|DELETE /admin/failover-rules`, shaped like /admin/virtual-models: GET lists every
 * rule, PUT upserts one by `model` and answers it, DELETE removes one by `model` (body or
 * query) and answers the remaining list. Configuration rules answer 409 `rule_read_only`.
 */
export function registerFailoverRuleRoutes(app: FastifyInstance, rules: FailoverRules): void {
  app.get('/admin/failover-rules', async () => rules.list().map(renderFailoverRule));

  app.put('/admin/failover-rules', async (request) => {
    // What GET returned may be sent back as is: read-only fields are ignored.
    const { origin: _origin, created_at: _created, updated_at: _updated, ...input } = objectBody(request.body);
    let definition;
    try {
      definition = parseFailoverRuleInput(input, '');
    } catch (error) {
      if (error instanceof FailoverRuleValidationError) throw invalidParameter(error.field, error.message);
      throw error;
    }
    return renderFailoverRule(await rules.upsert(definition));
  });

  app.delete('/admin/failover-rules', async (request) => {
    await rules.remove(modelToDelete(request));
    return rules.list().map(renderFailoverRule);
  });
}

/** `?model=` when given, else `model` of the JSON body. */
function modelToDelete(request: FastifyRequest): string {
  const query = request.query as Record<string, unknown>;
  const model = query['model'] !== undefined ? query['model'] : objectBody(request.body)['model'];
  if (typeof model !== 'string' || model.trim() === '') {
    throw invalidRequest('model is required (in the body or the query)', { code: 'missing_field', param: 'model' });
  }
  return model.trim();
}
