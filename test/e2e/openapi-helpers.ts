import { expect } from 'vitest';

export type Json = Record<string, unknown>;

/**
 * The JSON schema GET /openapi.json gives for `method path` answering `status` (any status the
 * operation does not list: its default, the error envelope); null when that answer has no body.
 */
export function answerSchema(document: Json, path: string, method: string, status: number): Json | null {
  const operation = ((document['paths'] as Json)[path] as Json | undefined)?.[method] as Json | undefined;
  expect(operation, `${method} ${path} described`).toBeDefined();
  const responses = (operation as Json)['responses'] as Json;
  let answer = (responses[String(status)] ?? responses['default']) as Json;
  const ref = answer['$ref'];
  if (typeof ref === 'string') answer = resolve(document, ref);
  const content = answer['content'] as Json | undefined;
  if (content === undefined) return null;
  const schema = (content['application/json'] as Json)['schema'] as Json;
  return typeof schema['$ref'] === 'string' ? resolve(document, schema['$ref']) : schema;
}

function resolve(document: Json, ref: string): Json {
  return ref
    .slice(2)
    .split('/')
    .reduce<Json>((node, key) => node[key] as Json, document);
}
