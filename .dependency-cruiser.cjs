/**
 * Import boundaries of src/ (ADR 38). Imports only go down this list; a folder may import
 * its own layer's folders (sideways) but never a layer above it, and there are no circles.
 * Type-only imports count. Checked by `npm run lint:deps` and test/architecture/layers.test.ts.
 */
const layers = [
  { name: 'composition', path: '^src/(main\\.ts|services\\.ts|demo/|cluster/|lifecycle/)' },
  { name: 'edge', path: '^src/(http|admin)/' },
  { name: 'gateway', path: '^src/gateway/' },
  { name: 'pipeline', path: '^src/(admission|dialects)/' },
  { name: 'config', path: '^src/config/' },
  { name: 'storage', path: '^src/storage/' },
  { name: 'routing', path: '^src/routing/' },
  {
    name: 'domains',
    path: '^src/(auth|ratelimit|budgets|usage|cache|mcp|guardrails|ownership|observability|request-log|responses|audit)/',
  },
  { name: 'providers', path: '^src/providers/' },
  { name: 'streaming', path: '^src/streaming/' },
  { name: 'base', path: '^src/(core|errors|lazy|types|testing)/' },
];

const upward = layers.slice(1).map((layer, index) => ({
  name: `no-upward-from-${layer.name}`,
  comment: `${layer.name} may import only its own layer and the layers below it`,
  severity: 'error',
  from: { path: layer.path, pathNot: '\\.test\\.ts$' },
  to: { path: layers.slice(0, index + 1).map((above) => above.path) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circles in src/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-unlayered',
      comment: 'Every folder of src/ belongs to a layer in .dependency-cruiser.cjs.',
      severity: 'error',
      from: { path: '^src/', pathNot: layers.map((layer) => layer.path) },
      to: {},
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^dist/' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json', '.d.ts'] },
  },
};
