import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { clusterKey, type Cluster } from './go-template.ts';
import {
  chartDir,
  gatewayEnv,
  helmAvailable,
  type Manifest,
  render,
  renderHere,
  root,
  scaled,
  templates,
  values,
  withKey,
} from './helm-render.ts';

// deploy/helm/model-gateway. Helm is not in Debian's archive, so these machines (and CI) have
// no `helm`: the static checks below always run, and the rendering suite renders with `helm
// template` wherever a `helm` binary is on PATH, else with the Go-template subset renderer of
// go-template.ts (the chart's own actions and functions, nothing more). `helm lint` needs helm;
// without it, "what helm lint checks" below covers the lint rules that matter for this chart.

const valuesSchema = z.fromJSONSchema(
  JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as Parameters<typeof z.fromJSONSchema>[0],
);
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

describe(`Helm chart rendered (${helmAvailable ? 'helm template' : 'Go-template subset renderer: no helm on PATH'})`, () => {
  it.skipIf(!helmAvailable)('passes helm lint with default values and with a given Secret (needs helm on PATH)', () => {
    expect(() => execFileSync('helm', ['lint', chartDir], { encoding: 'utf8' })).not.toThrow();
    expect(() => execFileSync('helm', ['lint', chartDir, '--set', withKey[0] ?? ''], { encoding: 'utf8' })).not.toThrow();
  });

  it('refuses to run without a master key (saying the exact --set), or several replicas without PostgreSQL and Redis', () => {
    const refused = render(['masterKey.generate=false']);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('masterKey.existingSecret is required');
    expect(refused.stderr).toContain('--set masterKey.existingSecret=gateway-secrets');
    expect(refused.stderr).toContain('--from-literal=master-key=');
    expect(render([...withKey, 'replicaCount=2']).stderr).toContain('postgresql.enabled=true');
  });

  it('default values: a generated master key Secret, and SQLite on a PersistentVolumeClaim of the single pod', () => {
    const { ok, manifests, stderr } = render([]);
    expect(ok, stderr).toBe(true);
    expect(manifests.map((manifest) => manifest.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'PersistentVolumeClaim',
      'Secret',
      'Service',
    ]);
    const secret = manifests.find((manifest) => manifest.kind === 'Secret') as Manifest & { data: Record<string, string> };
    expect(secret.metadata.name).toBe('gw-model-gateway-master-key');
    expect(secret.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(Buffer.from(secret.data['master-key'] ?? '', 'base64').toString()).toMatch(/^[A-Za-z0-9]{48}$/);
    expect(gatewayEnv(manifests).get('MASTER_KEY')).toEqual({ secretKeyRef: { name: 'gw-model-gateway-master-key', key: 'master-key' } });
    const claim = manifests.find((manifest) => manifest.kind === 'PersistentVolumeClaim');
    expect(claim?.metadata.name).toBe('gw-model-gateway-data');
    expect(claim?.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
    const deployment = manifests.find((manifest) => manifest.kind === 'Deployment');
    const pod = (deployment?.spec['template'] as { spec: { volumes: Array<Record<string, unknown>> } }).spec;
    expect(pod.volumes.find((volume) => volume['name'] === 'data')).toEqual({
      name: 'data',
      persistentVolumeClaim: { claimName: 'gw-model-gateway-data' },
    });
    expect(deployment?.spec['strategy']).toEqual({ type: 'Recreate' });
    expect(gatewayEnv(manifests).get('SQLITE_PATH')).toBe('/data/gateway.db');
  });

  it('keeps the generated master key across upgrades (lookup finds the Secret of the first install)', () => {
    const first = renderHere([]).manifests.find((manifest) => manifest.kind === 'Secret') as Manifest & { data: Record<string, string> };
    const cluster: Cluster = new Map([[clusterKey('v1', 'Secret', 'default', first.metadata.name), { data: first.data }]]);
    const upgrade = renderHere(['image.tag=0.2.0'], cluster).manifests.find((manifest) => manifest.kind === 'Secret') as typeof first;
    expect(upgrade.data).toEqual(first.data);
    const fresh = renderHere([]).manifests.find((manifest) => manifest.kind === 'Secret') as typeof first;
    expect(fresh.data['master-key']).not.toBe(first.data['master-key']);
  });

  it('persistence: an existing claim, none (emptyDir, for trials), none with PostgreSQL', () => {
    const volumeOf = (settings: string[]): { kinds: string[]; volume: unknown; strategy: unknown } => {
      const { manifests, stderr } = render(settings);
      const deployment = manifests.find((manifest) => manifest.kind === 'Deployment');
      expect(deployment, stderr).toBeDefined();
      const pod = (deployment?.spec['template'] as { spec: { volumes: Array<Record<string, unknown>> } }).spec;
      return {
        kinds: manifests.map((manifest) => manifest.kind),
        volume: pod.volumes.find((volume) => volume['name'] === 'data'),
        strategy: deployment?.spec['strategy'],
      };
    };
    const existing = volumeOf([...withKey, 'persistence.existingClaim=gw-data']);
    expect(existing.kinds).not.toContain('PersistentVolumeClaim');
    expect(existing.volume).toEqual({ name: 'data', persistentVolumeClaim: { claimName: 'gw-data' } });
    const trial = volumeOf([...withKey, 'persistence.enabled=false']);
    expect(trial.kinds).not.toContain('PersistentVolumeClaim');
    expect(trial.volume).toEqual({ name: 'data', emptyDir: {} });
    expect(trial.strategy).toBeUndefined();
    expect(volumeOf(scaled).kinds).not.toContain('PersistentVolumeClaim');
  });

  it('never runs in open mode: env may not override MASTER_KEY, HOST or ALLOW_OPEN_NETWORK', () => {
    for (const name of ['MASTER_KEY', 'HOST', 'ALLOW_OPEN_NETWORK']) {
      const rendered = render([...withKey, `env.${name}=x`]);
      expect(rendered.ok, name).toBe(false);
      expect(rendered.stderr).toContain('never runs in open mode');
    }
    expect(render([...withKey, 'env.LOG_LEVEL=debug']).ok).toBe(true);
  });

  it('one replica with a given Secret: SQLite on /data, counters in memory, probes, ClientIP affinity, no HPA or PDB', () => {
    const { ok, manifests, stderr } = render(withKey);
    expect(ok, stderr).toBe(true);
    expect(manifests.map((manifest) => manifest.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'PersistentVolumeClaim', 'Service']);
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
  Secret: 'kubernetes-models/v1/Secret',
  PersistentVolumeClaim: 'kubernetes-models/v1/PersistentVolumeClaim',
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
    ['default values', []],
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
