import { isObject, type JsonObject } from './wire.ts';

const dropped = new Set(['propertyOrdering', 'property_ordering', 'example', 'nullable']);
const counts = new Set(['minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties']);

/**
 * A Gemini `Schema` (OpenAPI 3.0 subset: upper-case `type`, `nullable`, int64 bounds sent
 * as strings) as JSON Schema: types lower-cased, `nullable` as a `null` type, bounds as
 * numbers, Gemini-only keywords (`propertyOrdering`, `example`) dropped. A schema given as
 * `parametersJsonSchema` / `responseJsonSchema` is JSON Schema already and is not passed here.
 */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!isObject(schema)) return schema;
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (dropped.has(key)) continue;
    if (key === 'type') result['type'] = typeof value === 'string' ? value.toLowerCase() : value;
    else if (key === 'properties' && isObject(value)) result[key] = mapValues(value);
    else if (key === 'items' || key === 'anyOf' || key === 'any_of') result[key === 'any_of' ? 'anyOf' : key] = toJsonSchema(value);
    else if (counts.has(key) && typeof value === 'string' && /^\d+$/.test(value)) result[key] = Number(value);
    else result[key] = value;
  }
  if (schema['nullable'] === true && typeof result['type'] === 'string') result['type'] = [result['type'], 'null'];
  return result;
}

function mapValues(properties: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(properties).map(([name, value]) => [name, toJsonSchema(value)]));
}
