import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { ChartRenderer, TemplateFailure } from './go-template.ts';

// deploy/helm/model-gateway. Helm is not in Debian's archive, so these machines (and CI) have
// no `helm`: the static checks below always run, and the rendering suite renders with `helm
// template` wherever a `helm` binary is on PATH, else with the Go-template subset renderer of
// go-template.ts (the chart's own actions and functions, nothing more). `helm lint` needs helm.

const root = resolve(import.meta.dirname, '..', '..');
const chartDir = join(root, 'deploy', 'helm', 'model-gateway');
const templatesDir = join(chartDir, 'templates');
const templateFiles = readdirSync(templatesDir).filter((file) => /\.(yaml|tpl|txt)$/.test(file));
const templates = new Map(templateFiles.map((file) => [file, readFileSync(join(templatesDir, file), 'utf8')]));
const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Record<string, unknown>;
const valuesSchema = z.fromJSONSchema(
  JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as Parameters<typeof z.fromJSONSchema>[0],
);
const helmAvailable = spawnSync('helm', ['version', '--short'], { encoding: 'utf8' }).status === 0;
/** Values whose content is free-form (passed through with toYaml or ranged over). */
const freeForm = new Set([
  'config',
  'env',
  'resources',
  'podAnnotations',
  'podSecurityContext',
  'securityContext',
  'nodeSelector',
  'affinity',
]);

function lookup(path: string[]): unknown {
  let node: unknown = values;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

describe('Helm chart, static checks', () => {
  it('has a v2 Chart.yaml whose appVersion is the package version', () => {
    const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, string>;
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(chart['apiVersion']).toBe('v2');
    expect(chart['name']).toBe('model-gateway');
    expect(chart['version']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(chart['appVersion']).toBe(pkg.version);
  });

  it('values.yaml satisfies values.schema.json, which refuses wrong values', () => {
    expect(valuesSchema.safeParse(values).success).toBe(true);
    const wrong = structuredClone(values) as { service: Record<string, unknown>; rateLimits: Record<string, unknown>; typo?: boolean };
    wrong.service['sessionAffinity'] = 'Cookie';
    wrong.rateLimits['store'] = 'postgres';
    wrong.typo = true;
    const issues = valuesSchema.safeParse(wrong).error?.issues.map((issue) => issue.path.join('.')) ?? [];
    expect(issues.sort()).toEqual(['', 'rateLimits.store', 'service.sessionAffinity']);
  });

  it('references only values that values.yaml defines', () => {
    for (const [file, text] of templates) {
      for (const match of text.matchAll(/\.Values((?:\.\w+)+)/g)) {
        const path = (match[1] ?? '').slice(1).split('.');
        if (freeForm.has(path[0] ?? '')) continue;
        expect(lookup(path), `${file}: .Values.${path.join('.')}`).not.toBeUndefined();
      }
    }
  });

  it('closes every if/range/with/define block', () => {
    for (const [file, text] of templates) {
      const opened = [...text.matchAll(/\{\{-?\s*(if|range|with|define)\b/g)].length;
      const closed = [...text.matchAll(/\{\{-?\s*end\s*-?\}\}/g)].length;
      expect(closed, file).toBe(opened);
    }
  });

  it('sets only environment variables the gateway reads', () => {
    const configSources = readdirSync(join(root, 'src', 'config'))
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
      .map((file) => readFileSync(join(root, 'src', 'config', file), 'utf8'))
      .join('\n');
    const names = [...(templates.get('deployment.yaml') ?? '').matchAll(/- name: ([A-Z][A-Z0-9_]+)\s*$/gm)].map((match) => match[1] ?? '');
    expect(names).toContain('RATE_LIMITS_STORE');
    for (const name of names) expect(configSources, name).toContain(`'${name}'`);
  });

  it('probes readiness on /health/ready and liveness on /health, routes the gateway serves', () => {
    const probes = values['probes'] as Record<string, { path: string }>;
    expect(probes['readiness']?.path).toBe('/health/ready');
    expect(probes['liveness']?.path).toBe('/health');
    const healthRoutes = readFileSync(join(root, 'src', 'http', 'routes', 'health.ts'), 'utf8');
    expect(healthRoutes).toContain("app.get('/health/ready'");
    expect(healthRoutes).toContain("app.get('/health'");
    const deployment = templates.get('deployment.yaml') ?? '';
    expect(deployment).toMatch(/readinessProbe:\s+httpGet:\s+path: \{\{ \.Values\.probes\.readiness\.path \}\}/);
    expect(deployment).toMatch(/livenessProbe:\s+httpGet:\s+path: \{\{ \.Values\.probes\.liveness\.path \}\}/);
  });

  it('keeps MCP clients on one pod by default (ClientIP affinity on the Service)', () => {
    expect((values['service'] as Record<string, unknown>)['sessionAffinity']).toBe('ClientIP');
    expect(templates.get('service.yaml')).toContain('sessionAffinity: {{ .Values.service.sessionAffinity }}');
  });
});

interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
}

interface Rendered {
  ok: boolean;
  manifests: Manifest[];
  stderr: string;
}

function render(settings: string[]): Rendered {
  return helmAvailable ? renderWithHelm(settings) : renderHere(settings);
}

function documentsOf(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((document) => document.toJSON() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

function renderWithHelm(settings: string[]): Rendered {
  const args = ['template', 'gw', chartDir, ...settings.flatMap((setting) => ['--set', setting])];
  const result = spawnSync('helm', args, { encoding: 'utf8' });
  if (result.status !== 0) return { ok: false, manifests: [], stderr: result.stderr };
  return { ok: true, manifests: documentsOf(result.stdout), stderr: result.stderr };
}

/** `helm template gw <chart> --set ...` with the subset renderer: `--set a.b=3` as Helm types it. */
function renderHere(settings: string[]): Rendered {
  const merged = structuredClone(values);
  for (const setting of settings) {
    const [path = '', raw = ''] = setting.split('=');
    const keys = path.split('.');
    const holder = keys.slice(0, -1).reduce<Record<string, unknown>>((node, key) => (node[key] ??= {}) as Record<string, unknown>, merged);
    holder[keys.at(-1) ?? ''] = /^\d+$/.test(raw) ? Number(raw) : raw === 'true' || raw === 'false' ? raw === 'true' : raw;
  }
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, string>;
  const root = {
    Values: merged,
    Release: { Name: 'gw', Namespace: 'default', Service: 'Helm' },
    Chart: { Name: chart['name'], Version: chart['version'], AppVersion: chart['appVersion'] },
    Template: { BasePath: 'model-gateway/templates' },
  };
  const renderer = new ChartRenderer(templates, 'model-gateway/templates');
  try {
    const files = [...templates.keys()].filter((file) => file.endsWith('.yaml')).sort();
    const text = files.map((file) => `---\n# Source: model-gateway/templates/${file}\n${renderer.render(file, root)}\n`).join('');
    return { ok: true, manifests: documentsOf(text), stderr: '' };
  } catch (error) {
    if (error instanceof TemplateFailure) return { ok: false, manifests: [], stderr: `Error: execution error: ${error.message}` };
    throw error;
  }
}

function gatewayEnv(manifests: Manifest[]): Map<string, unknown> {
  const deployment = manifests.find((manifest) => manifest.kind === 'Deployment');
  const template = deployment?.spec['template'] as {
    spec: { containers: Array<{ env: Array<{ name: string; value?: string; valueFrom?: unknown }> }> };
  };
  return new Map(template.spec.containers[0]?.env.map((entry) => [entry.name, entry.value ?? entry.valueFrom]));
}

const withKey = ['masterKey.existingSecret=gateway-secrets'];
const scaled = [
  ...withKey,
  'replicaCount=3',
  'postgresql.enabled=true',
  'postgresql.existingSecret=db',
  'redis.enabled=true',
  'redis.existingSecret=redis',
];

describe(`Helm chart rendered (${helmAvailable ? 'helm template' : 'Go-template subset renderer: no helm on PATH'})`, () => {
  it.skipIf(!helmAvailable)('passes helm lint (needs helm on PATH)', () => {
    expect(() => execFileSync('helm', ['lint', chartDir, '--set', withKey[0] ?? ''], { encoding: 'utf8' })).not.toThrow();
  });

  it('refuses to render without a master key, or several replicas without PostgreSQL and Redis', () => {
    expect(render([]).stderr).toContain('masterKey.existingSecret is required');
    expect(render([...withKey, 'replicaCount=2']).stderr).toContain('postgresql.enabled=true');
  });

  it('never runs in open mode: env may not override MASTER_KEY, HOST or ALLOW_OPEN_NETWORK', () => {
    for (const name of ['MASTER_KEY', 'HOST', 'ALLOW_OPEN_NETWORK']) {
      const rendered = render([...withKey, `env.${name}=x`]);
      expect(rendered.ok, name).toBe(false);
      expect(rendered.stderr).toContain('never runs in open mode');
    }
    expect(render([...withKey, 'env.LOG_LEVEL=debug']).ok).toBe(true);
  });

  it('one replica: SQLite on /data, counters in memory, probes, ClientIP affinity, no HPA or PDB', () => {
    const { ok, manifests, stderr } = render(withKey);
    expect(ok, stderr).toBe(true);
    expect(manifests.map((manifest) => manifest.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Service']);
    const env = gatewayEnv(manifests);
    expect(env.get('RATE_LIMITS_STORE')).toBe('memory');
    expect(env.get('SQLITE_PATH')).toBe('/data/gateway.db');
    expect(env.get('MASTER_KEY')).toEqual({ secretKeyRef: { name: 'gateway-secrets', key: 'master-key' } });
    const service = manifests.find((manifest) => manifest.kind === 'Service');
    expect(service?.spec['sessionAffinity']).toBe('ClientIP');
    const text = JSON.stringify(manifests);
    expect(text).toContain('"readinessProbe":{"httpGet":{"path":"/health/ready"');
    expect(text).toContain('"livenessProbe":{"httpGet":{"path":"/health"');
  });

  it('several replicas: PostgreSQL and Redis from Secrets, RATE_LIMITS_STORE=redis, HPA and PDB when asked', () => {
    const { ok, manifests, stderr } = render([...scaled, 'autoscaling.enabled=true', 'podDisruptionBudget.enabled=true']);
    expect(ok, stderr).toBe(true);
    const env = gatewayEnv(manifests);
    expect(env.get('RATE_LIMITS_STORE')).toBe('redis');
    expect(env.get('STORAGE_TYPE')).toBe('postgresql');
    expect(env.get('DATABASE_URL')).toEqual({ secretKeyRef: { name: 'db', key: 'database-url' } });
    expect(env.get('REDIS_URL')).toEqual({ secretKeyRef: { name: 'redis', key: 'redis-url' } });
    expect(manifests.map((manifest) => manifest.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Service',
    ]);
  });
});

/** Module of each kind the chart renders, in kubernetes-models (schemas generated from the Kubernetes OpenAPI spec). */
const modelModules: Readonly<Record<string, string>> = {
  ConfigMap: 'kubernetes-models/v1/ConfigMap',
  Service: 'kubernetes-models/v1/Service',
  Deployment: 'kubernetes-models/apps/v1/Deployment',
  HorizontalPodAutoscaler: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
  PodDisruptionBudget: 'kubernetes-models/policy/v1/PodDisruptionBudget',
};

interface KubernetesModel {
  validate(): void;
}
type ModelClass = new (data: unknown) => KubernetesModel;

/** The model class of a kind; null when kubernetes-models is not installed (a devDependency to add). */
async function modelOf(kind: string): Promise<ModelClass | null> {
  const specifier = modelModules[kind];
  if (specifier === undefined) throw new Error(`no kubernetes-models module listed for ${kind}`);
  try {
    const loaded: unknown = await import(/* @vite-ignore */ specifier);
    return (loaded as Record<string, ModelClass>)[kind] ?? null;
  } catch {
    return null;
  }
}

const kubernetesModels = (await modelOf('ConfigMap')) !== null;

describe.skipIf(!kubernetesModels)('rendered manifests against the Kubernetes schemas (kubernetes-models)', () => {
  it.each([
    ['one replica', withKey],
    ['several replicas with HPA and PDB', [...scaled, 'autoscaling.enabled=true', 'podDisruptionBudget.enabled=true']],
  ])('%s: every manifest validates', async (_label, settings) => {
    const { ok, manifests, stderr } = render(settings);
    expect(ok, stderr).toBe(true);
    for (const manifest of manifests) {
      const Model = await modelOf(manifest.kind);
      expect(Model, manifest.kind).not.toBeNull();
      if (Model !== null) expect(() => new Model(manifest).validate(), `${manifest.kind} ${manifest.metadata.name}`).not.toThrow();
    }
  });

  it('the validation can fail: a Deployment with a text replica count is refused', async () => {
    const deployment = render(withKey).manifests.find((manifest) => manifest.kind === 'Deployment');
    const Model = await modelOf('Deployment');
    const broken = { ...deployment, spec: { ...deployment?.spec, replicas: 'two' } };
    expect(() => (Model === null ? undefined : new Model(broken).validate())).toThrow(/replicas/);
  });
});
