import { z } from 'zod';
import { isJsonObject as isPlainObject } from '../core/json.ts';

/** A key its schema does not know: its dotted path, and the keys known at that level. */
export interface UnknownKey {
  readonly path: string;
  readonly known: readonly string[];
}

/**
 * The keys in a raw configuration document that its schema does not know, at any
 * depth the schema describes (objects, and the entries of records such as `providers`): a typo like
 * `providers.openai.modles` is reported instead of silently dropped. Fields typed `unknown` are
 * validated by their own module and are not walked.
 */
export function unknownKeys(schema: z.ZodType, value: unknown, path: readonly string[] = []): UnknownKey[] {
  const inner = unwrap(schema);
  if (!isPlainObject(value)) return [];
  if (inner instanceof z.ZodObject) {
    if (acceptsAnyKey(inner)) return [];
    const shape = inner.shape as Record<string, z.ZodType>;
    return Object.entries(value).flatMap(([key, child]) => {
      const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
      return field === undefined
        ? [{ path: [...path, key].join('.'), known: Object.keys(shape) }]
        : unknownKeys(field, child, [...path, key]);
    });
  }
  if (inner instanceof z.ZodRecord) {
    const valueType = inner.valueType as z.ZodType;
    return Object.entries(value).flatMap(([key, child]) => unknownKeys(valueType, child, [...path, key]));
  }
  return [];
}

/** The schema a value is checked against once defaults, optionality and preprocessing are set aside. */
export function unwrap(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return unwrap(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault) return unwrap(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodPipe) return unwrap((schema.in instanceof z.ZodTransform ? schema.out : schema.in) as z.ZodType);
  return schema;
}

/** A loose object (`.loose()`, `.catchall(...)`) takes keys it does not name. */
function acceptsAnyKey(schema: z.ZodObject): boolean {
  const catchall = schema._zod.def.catchall;
  return catchall !== undefined && !(catchall instanceof z.ZodNever);
}
