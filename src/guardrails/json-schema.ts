import { isJsonObject as isObject } from '../core/json.ts';

type Json = Record<string, unknown>;

/** The schema of a request's `response_format: {type: "json_schema", json_schema: {schema}}`, or null. */
export function requestedSchema(body: Json): Json | null {
  const format = body['response_format'];
  if (!isObject(format) || format['type'] !== 'json_schema' || !isObject(format['json_schema'])) return null;
  const schema = format['json_schema']['schema'];
  return isObject(schema) ? schema : null;
}

/**
 * Where `text` fails the schema (`$.a.b: expected integer`), or null when it conforms. A
 * small validator: type, enum, const, properties, required, additionalProperties: false,
 * items, minItems/maxItems; other keywords (and `$ref`) are not checked.
 */
export function schemaViolation(text: string, schema: Json): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'the answer is not JSON';
  }
  return check(value, schema, '$');
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(actual: string, expected: unknown): boolean {
  const allowed = Array.isArray(expected) ? expected : [expected];
  return allowed.some((type) => type === actual || (type === 'number' && actual === 'integer'));
}

function check(value: unknown, schema: Json, path: string): string | null {
  const actual = typeOf(value);
  if (schema['type'] !== undefined && !typeMatches(actual, schema['type']))
    return `${path}: expected ${String(schema['type'])}, got ${actual}`;
  if (Array.isArray(schema['enum']) && !schema['enum'].some((option) => JSON.stringify(option) === JSON.stringify(value)))
    return `${path}: not one of the enum values`;
  if ('const' in schema && JSON.stringify(schema['const']) !== JSON.stringify(value)) return `${path}: not the const value`;
  if (isObject(value)) return checkObject(value, schema, path);
  if (Array.isArray(value)) return checkArray(value, schema, path);
  return null;
}

function checkObject(value: Json, schema: Json, path: string): string | null {
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  for (const name of Array.isArray(schema['required']) ? schema['required'] : [])
    if (typeof name === 'string' && !(name in value)) return `${path}: missing required property "${name}"`;
  for (const [name, child] of Object.entries(value)) {
    const property = properties[name];
    if (isObject(property)) {
      const problem = check(child, property, `${path}.${name}`);
      if (problem !== null) return problem;
    } else if (schema['additionalProperties'] === false) return `${path}: unexpected property "${name}"`;
  }
  return null;
}

function checkArray(value: unknown[], schema: Json, path: string): string | null {
  if (typeof schema['minItems'] === 'number' && value.length < schema['minItems']) return `${path}: fewer than ${schema['minItems']} items`;
  if (typeof schema['maxItems'] === 'number' && value.length > schema['maxItems']) return `${path}: more than ${schema['maxItems']} items`;
  const items = schema['items'];
  if (!isObject(items)) return null;
  for (let index = 0; index < value.length; index++) {
    const problem = check(value[index], items, `${path}[${index}]`);
    if (problem !== null) return problem;
  }
  return null;
}
