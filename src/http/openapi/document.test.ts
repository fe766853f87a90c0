import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, openApiPath, operationId } from './document.ts';
import { operations } from './operations.ts';

describe('buildOpenApiDocument', () => {
  it('lists a registered route without a description as undocumented', () => {
    const document = buildOpenApiDocument(
      [
        { method: 'GET', url: '/health' },
        { method: 'HEAD', url: '/health' },
        { method: 'POST', url: '/v1/new-thing' },
        { method: 'PROPFIND', url: '/p/:instance' },
      ],
      '1.0.0',
    );
    expect(document['x-undocumented-routes']).toEqual(['POST /v1/new-thing']);
    expect(Object.keys(document.paths)).toEqual(['/health']);
  });

  it('turns Fastify patterns into OpenAPI paths with their parameters', () => {
    expect(openApiPath('/p/:instance/*')).toBe('/p/{instance}/{path}');
    const document = buildOpenApiDocument([{ method: 'GET', url: '/v1/files/:id' }], '1.0.0');
    expect(document.paths['/v1/files/{id}']?.['get']?.['parameters']).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    ]);
  });
});

describe('operationIds', () => {
  it('are unique across every described route, wildcard routes included', () => {
    const routes = Object.entries(operations).flatMap(([url, methods]) => Object.keys(methods).map((method) => ({ method, url })));
    const document = buildOpenApiDocument(routes, '1.0.0');
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => String(operation['operationId'])));
    expect(ids.length).toBeGreaterThan(80);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    expect(operationId('GET', '/v1/models')).not.toBe(operationId('GET', '/v1/models/*'));
    expect(operationId('GET', '/p/:instance/*')).toBe('getPInstancePath');
  });
});
