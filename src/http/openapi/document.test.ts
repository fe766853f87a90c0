import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, openApiPath } from './document.ts';

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
