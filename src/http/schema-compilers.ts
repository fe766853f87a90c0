import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

import type { BuildCompilerFromPool as BuildValidator } from '@fastify/ajv-compiler';
import type { SerializerFactory as BuildSerializer } from '@fastify/fast-json-stringify-compiler';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

let validatorFactory: BuildValidator | undefined;
let serializerFactory: BuildSerializer | undefined;

/**
 * Fastify's own schema compilers (ajv and fast-json-stringify), required on first use instead
 * of when the server is created (ADR 0025). No route of the gateway declares a fastify schema
 * (request bodies are checked with zod), so a start never loads them: fastify() otherwise
 * requires @fastify/ajv-compiler and @fastify/fast-json-stringify-compiler, with ajv, at once.
 * They are required from node_modules (not bundled), like yaml in src/config/load.ts, since a
 * factory is called synchronously.
 */
export function lazySchemaCompilers(): CompilersFactory {
  const load = createRequire(import.meta.url);
  const buildValidator: BuildValidator = (externalSchemas, options) => {
    validatorFactory ??= (load('@fastify/ajv-compiler') as () => BuildValidator)();
    return validatorFactory(externalSchemas, options);
  };
  const buildSerializer: BuildSerializer = (externalSchemas, options) => {
    serializerFactory ??= (
      load('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => BuildSerializer }
    ).SerializerSelector();
    return serializerFactory(externalSchemas, options);
  };
  return { buildValidator, buildSerializer };
}
