import { isRecord, type Json } from './wire.ts';

/**
 * JSON Schema keywords Gemini's `Schema` (an OpenAPI 3.0 subset) takes; any other keyword
 * (`$schema`, `additionalProperties`, `default`, `examples`, `const`, `strict`, ...) makes the
 * API answer 400, so it is dropped.
 */
const allowedKeywords = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'anyOf',
  'propertyOrdering',
]);

/** `$ref` chains deeper than this are cut (a recursive schema cannot be inlined). */
const maximumDepth = 24;

/**
 * An OpenAI tool or response JSON schema as Gemini accepts it: local `$ref`s (`#/$defs/x`,
 * `#/definitions/x`) inlined, `type: ["string", "null"]` as `type: "string"` + `nullable`,
 * `const` as a one-value `enum`, enums kept only when all their values are strings, and
 * every keyword Gemini rejects removed. Pure; the input is not modified.
 */
export function cleanSchema(schema: unknown): Json {
  if (!isRecord(schema)) return {};
  const definitions = { ...recordOf(schema['definitions']), ...recordOf(schema['$defs']) };
  return clean(schema, definitions, 0);
}

function clean(schema: Json, definitions: Json, depth: number): Json {
  const resolved = resolveRef(schema, definitions);
  if (depth > maximumDepth) return { type: 'object' };
  const out: Json = {};
  for (const [key, value] of Object.entries(resolved)) {
    if (key === 'type') Object.assign(out, typeOf(value));
    else if (key === 'const') out['enum'] = [value];
    else if (allowedKeywords.has(key)) out[key] = value;
  }
  if (Array.isArray(out['enum']) && !out['enum'].every((item) => typeof item === 'string')) delete out['enum'];
  if (isRecord(out['properties'])) {
    const properties: Json = {};
    for (const [name, child] of Object.entries(out['properties'])) properties[name] = clean(recordOf(child), definitions, depth + 1);
    out['properties'] = properties;
  }
  if (isRecord(out['items'])) out['items'] = clean(out['items'], definitions, depth + 1);
  else if (out['items'] !== undefined) delete out['items'];
  if (Array.isArray(out['anyOf'])) out['anyOf'] = out['anyOf'].map((child) => clean(recordOf(child), definitions, depth + 1));
  if (Array.isArray(out['required']) && isRecord(out['properties'])) {
    const names = out['properties'];
    out['required'] = out['required'].filter((name) => typeof name === 'string' && name in names);
  }
  return out;
}

function resolveRef(schema: Json, definitions: Json): Json {
  const ref = schema['$ref'];
  if (typeof ref !== 'string') return schema;
  const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)?.[1];
  const target = name === undefined ? undefined : definitions[name];
  const { $ref: _ignored, ...rest } = schema;
  return isRecord(target) ? { ...target, ...rest } : rest;
}

/** `"string"` as is; `["string", "null"]` -> string + nullable; a multi-type list keeps its first. */
function typeOf(value: unknown): Json {
  if (typeof value === 'string') return { type: value };
  if (!Array.isArray(value)) return {};
  const types = value.filter((item): item is string => typeof item === 'string');
  const concrete = types.filter((item) => item !== 'null');
  const out: Json = {};
  if (concrete[0] !== undefined) out['type'] = concrete[0];
  if (concrete.length < types.length) out['nullable'] = true;
  return out;
}

function recordOf(value: unknown): Json {
  return isRecord(value) ? value : {};
}
