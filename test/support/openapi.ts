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

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * A strict structural lint of an OpenAPI 3.1 document (what `@redocly/cli lint` and spectral
 * check first, without either installed): every operationId present, well formed and unique;
 * every `$ref` local and resolving; each `{parameter}` of a path declared as a required path
 * parameter and no path parameter the path lacks; no two paths identical once parameters are
 * renamed; every tag and security scheme used declared; every response described. Returns the
 * problems, one line each.
 */
export function lintOpenApi(document: Json): string[] {
  const problems: string[] = [];
  const seenIds = new Map<string, string>();
  const seenShapes = new Map<string, string>();
  const tags = new Set(((document['tags'] as Json[] | undefined) ?? []).map((tag) => String(tag['name'])));
  const schemes = ((document['components'] as Json | undefined)?.['securitySchemes'] ?? {}) as Json;
  for (const [path, item] of Object.entries(document['paths'] as Json)) {
    const shape = path.replace(/\{[^}]+\}/g, '{}');
    const earlier = seenShapes.get(shape);
    if (earlier !== undefined) problems.push(`${path}: identical to ${earlier} once parameters are renamed`);
    seenShapes.set(shape, path);
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
    for (const [method, value] of Object.entries(item as Json)) {
      const where = `${method} ${path}`;
      if (!methods.includes(method)) {
        problems.push(`${where}: not an HTTP method`);
        continue;
      }
      const operation = value as Json;
      const id = operation['operationId'];
      if (typeof id !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(id)) problems.push(`${where}: operationId missing or malformed`);
      else if (seenIds.has(id)) problems.push(`${where}: operationId ${id} also used by ${seenIds.get(id)}`);
      else seenIds.set(id, where);
      const declared = ((operation['parameters'] as Json[] | undefined) ?? []).filter((parameter) => parameter['in'] === 'path');
      for (const name of templated) {
        const parameter = declared.find((entry) => entry['name'] === name);
        if (parameter === undefined) problems.push(`${where}: path parameter {${name}} not declared`);
        else if (parameter['required'] !== true) problems.push(`${where}: path parameter {${name}} not required`);
      }
      for (const parameter of declared) {
        if (!templated.includes(String(parameter['name'])))
          problems.push(`${where}: path parameter ${String(parameter['name'])} not in the path`);
      }
      for (const tag of (operation['tags'] as string[] | undefined) ?? []) {
        if (!tags.has(tag)) problems.push(`${where}: tag ${tag} not declared in the top-level tags`);
      }
      for (const requirement of (operation['security'] as Json[] | undefined) ?? []) {
        for (const scheme of Object.keys(requirement)) {
          if (!(scheme in schemes)) problems.push(`${where}: security scheme ${scheme} not declared`);
        }
      }
      const responses = Object.entries((operation['responses'] as Json | undefined) ?? {});
      if (!responses.some(([status]) => /^2\d\d$/.test(status))) problems.push(`${where}: no success response`);
      for (const [status, response] of responses) {
        const described = typeof (response as Json)['$ref'] === 'string' || typeof (response as Json)['description'] === 'string';
        if (!described) problems.push(`${where}: response ${status} has no description`);
      }
    }
  }
  for (const ref of refsOf(document)) {
    if (!ref.startsWith('#/') || !resolves(document, ref)) problems.push(`$ref ${ref} does not resolve`);
  }
  return problems;
}

function refsOf(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refsOf);
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => (key === '$ref' && typeof value === 'string' ? [value] : refsOf(value)));
}

function resolves(document: Json, ref: string): boolean {
  let node: unknown = document;
  for (const key of ref.slice(2).split('/')) {
    const name = key.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, name)) return false;
    node = (node as Json)[name];
  }
  return true;
}
