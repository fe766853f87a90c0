import { z } from 'zod';

/**
 * Request bodies of the admin API. The routes validate with these very schemas (`parseBody`
 * in src/admin/admin-errors.ts: the first issue is a 400 naming its field, with the message
 * given here), and GET /openapi.json states them as the request bodies. Rules that tie fields
 * together (scope and subject, period or period_seconds, an expiry in the future) stay in the
 * routes, after the schema.
 */

const maximumNameLength = 200;
const maximumEntries = 200;
const maximumEntryLength = 200;

/** A string field that may be absent or null; `''` counts as absent where the route says so. */
const optionalText = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .nullable()
    .optional();

const allowListMessage = (field: string): string =>
  `${field} must be null or an array of at most ${maximumEntries} non-empty strings of at most ${maximumEntryLength} characters`;

/** `allowed_models` / `allowed_endpoints`: absent (unchanged), null (no restriction) or a list (`[]` allows nothing). */
const allowList = (field: string) => {
  const message = allowListMessage(field);
  return z
    .array(z.string({ error: message }).max(maximumEntryLength, message).trim().min(1, message), { error: message })
    .max(maximumEntries, message)
    .nullable()
    .optional()
    .describe(`${field === 'allowed_models' ? 'model selectors' : 'endpoint paths'} the key may use; null: all`);
};

const nameMessage = `name must be a non-empty string of at most ${maximumNameLength} characters`;
const keyName = z.string({ error: nameMessage }).max(maximumNameLength, nameMessage).trim().min(1, nameMessage);
const role = z.enum(['user', 'viewer', 'admin'], { error: 'role must be one of user, viewer, admin' });

/** The per-key shorthand objects, made into rules by PUT /admin/rate-limits and PUT /admin/budgets. */
const shorthand = (field: string, fields: string) =>
  z
    .record(z.string(), z.unknown(), { error: `${field} must be an object` })
    .nullable()
    .optional()
    .describe(`${fields}: a rule on the key's user_path, validated as that route validates it`);

export const apiKeyCreateSchema = z.object({
  name: keyName,
  user_path: optionalText('user_path').describe('the user path every request of the key is bound to'),
  allowed_models: allowList('allowed_models'),
  allowed_endpoints: allowList('allowed_endpoints'),
  role: role.optional(),
  expires_at: optionalText('expires_at').describe('ISO 8601 date-time in the future; null: never'),
  rate_limit: shorthand('rate_limit', '{period | period_seconds, max_requests?, max_tokens?}'),
  budget: shorthand('budget', '{period | period_seconds, amount}'),
});

export const apiKeyPatchSchema = z.object({
  name: keyName.optional(),
  allowed_models: allowList('allowed_models'),
  allowed_endpoints: allowList('allowed_endpoints'),
  role: role.optional(),
});

const graceMessage = 'grace_seconds must be an integer from 0 to 2592000 (30 days)';
export const apiKeyRotateSchema = z.object({
  grace_seconds: z
    .number({ error: graceMessage })
    .int(graceMessage)
    .min(0, graceMessage)
    .max(30 * 86_400, graceMessage)
    .nullable()
    .optional()
    .describe('how long the old secret keeps working; default 0'),
});

const budgetPeriodMessage = 'period must be hourly, daily, weekly or monthly, or give period_seconds (an integer of at least 60)';
const budgetKey = {
  user_path: z.string({ error: 'user_path is required' }),
  period: z.enum(['hourly', 'daily', 'weekly', 'monthly'], { error: budgetPeriodMessage }).optional(),
  period_seconds: z.number({ error: budgetPeriodMessage }).int(budgetPeriodMessage).min(60, budgetPeriodMessage).optional(),
};
export const budgetKeySchema = z.object(budgetKey);
const amountMessage = 'amount must be a number of dollars above 0';
export const budgetPutSchema = z.object({ ...budgetKey, amount: z.number({ error: amountMessage }).positive(amountMessage) });
/** Codes of budget fields whose refusal is not `invalid_parameter`. */
export const budgetCodes = { user_path: 'missing_field', amount: 'invalid_body' } as const;

const scopeMessage = 'scope must be one of user_path, provider, model';
const periodSecondsMessage = 'period_seconds must be 0 (concurrent) or a positive integer';
const periodFields = {
  period: z.string({ error: 'period must be one of minute, hour, day, concurrent, or set period_seconds' }).optional(),
  period_seconds: z.number({ error: periodSecondsMessage }).int(periodSecondsMessage).min(0, periodSecondsMessage).optional(),
};
const limitKeyMessage = 'limit_key is required: {"period": "minute"} or {"period_seconds": 300}';
const limitKey = z.object(periodFields, { error: limitKeyMessage }).describe('the period: {"period": "minute"} or {"period_seconds": 300}');
const ruleKey = {
  scope: z.enum(['user_path', 'provider', 'model'], { error: scopeMessage }).optional().describe('default user_path'),
  subject: optionalText('subject').describe('the user path, provider instance or model the rule is on'),
  user_path: optionalText('user_path').describe('shorthand for scope user_path and this subject'),
};
const cap = (field: string) => {
  const message = `${field} must be an integer greater than 0`;
  return z.number({ error: message }).int(message).positive(message).nullable().optional();
};

export const rateLimitPutSchema = z.object({
  ...ruleKey,
  limit_key: limitKey,
  max_requests: cap('max_requests'),
  max_tokens: cap('max_tokens'),
});
export const rateLimitDeleteSchema = z.object({ ...ruleKey, limit_key: limitKey });
/** reset-one: the period in `limit_key` or at the top level. */
export const rateLimitResetOneSchema = z.object({ ...ruleKey, limit_key: limitKey.optional(), ...periodFields });
export const rateLimitCodes = { limit_key: 'missing_field' } as const;

export const confirmationSchema = z.object({
  confirmation: z.literal('reset', { error: 'confirmation must be the word "reset"' }),
});

/** DELETE bodies naming one entry. */
export const nameBodySchema = z.object({ name: z.string({ error: 'name is required' }).min(1, 'name is required') });
