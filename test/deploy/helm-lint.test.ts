import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { chartDir, type Manifest, render, renderNotes, scaled, templates, withKey } from './helm-render.ts';

// What `helm lint` checks, for where no helm binary exists (Helm is not in Debian's archive, so
// neither these machines nor CI have one; helm-chart.test.ts runs the real `helm lint` where
// it does): Chart.yaml's required fields, the chart rendering with its default values, every
// rendered document valid YAML with apiVersion, kind and a valid name, API versions current
// for the chart's kubeVersion, and the chart's labels on every object with valid values.

const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
const semver = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
/** DNS-1123 subdomain (names of most objects) and label (Services: their name is a DNS label). */
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** The API version of each kind the chart may render, current from Kubernetes 1.25 (the chart's kubeVersion floor) on. */
const apiVersions: Readonly<Record<string, string>> = {
  ConfigMap: 'v1',
  Secret: 'v1',
  Service: 'v1',
  PersistentVolumeClaim: 'v1',
  Deployment: 'apps/v1',
  HorizontalPodAutoscaler: 'autoscaling/v2',
  PodDisruptionBudget: 'policy/v1',
};
const settingsCases: Array<[string, string[]]> = [
  ['default values', []],
  ['a given master key Secret', withKey],
  ['several replicas with HPA and PDB', [...scaled, 'autoscaling.enabled=true', 'podDisruptionBudget.enabled=true']],
];

describe('what helm lint checks, without helm', () => {
  it('Chart.yaml: apiVersion v2, the directory name, SemVer version, type, kubeVersion constraint', () => {
    expect(chart['apiVersion']).toBe('v2');
    expect(chart['name']).toBe(basename(chartDir));
    expect(String(chart['version'])).toMatch(semver);
    expect(chart['type']).toBe('application');
    expect(typeof chart['description']).toBe('string');
    expect(typeof chart['appVersion']).toBe('string');
    expect(String(chart['kubeVersion'])).toMatch(/^(>=|>|<|<=|=|~|\^)?\d+\.\d+\.\d+(-0)?$/);
  });

  it.each(settingsCases)('%s: renders to valid YAML documents, each with apiVersion, kind and a valid name', (_label, settings) => {
    const { ok, text, manifests, stderr } = render(settings);
    expect(ok, stderr).toBe(true);
    for (const document of parseAllDocuments(text)) expect(document.errors.map((error) => error.message)).toEqual([]);
    expect(text).not.toContain('<no value>');
    expect(manifests.length).toBeGreaterThan(0);
    for (const manifest of manifests) {
      expect(apiVersions[manifest.kind], `${manifest.kind} is a kind the chart knows`).toBeDefined();
      expect(manifest.apiVersion, manifest.kind).toBe(apiVersions[manifest.kind]);
      const name = manifest.metadata.name;
      expect(name, manifest.kind).toMatch(manifest.kind === 'Service' ? dnsLabel : dnsSubdomain);
      expect(name.length, name).toBeLessThanOrEqual(manifest.kind === 'Service' ? 63 : 253);
    }
  });

  it.each(settingsCases)('%s: every object carries the chart labels, with valid values; selectors match the pods', (_label, settings) => {
    const { manifests } = render(settings);
    for (const manifest of manifests) {
      const labels = manifest.metadata.labels ?? {};
      for (const key of [
        'app.kubernetes.io/name',
        'app.kubernetes.io/instance',
        'app.kubernetes.io/version',
        'app.kubernetes.io/managed-by',
        'helm.sh/chart',
      ]) {
        expect(labels[key], `${manifest.kind} ${key}`).toBeTruthy();
      }
      for (const [key, value] of Object.entries(labels)) {
        expect(value.length, `${manifest.kind} ${key}`).toBeLessThanOrEqual(63);
        expect(value, `${manifest.kind} ${key}`).toMatch(labelValue);
      }
    }
    const deployment = manifests.find((manifest) => manifest.kind === 'Deployment') as Manifest;
    const selector = (deployment.spec['selector'] as { matchLabels: Record<string, string> }).matchLabels;
    const podLabels = (deployment.spec['template'] as { metadata: { labels: Record<string, string> } }).metadata.labels;
    expect(podLabels).toMatchObject(selector);
    const service = manifests.find((manifest) => manifest.kind === 'Service') as Manifest;
    expect(podLabels).toMatchObject(service.spec['selector'] as Record<string, string>);
  });

  it('the image reference of the default values is complete (repository:appVersion)', () => {
    const deployment = render([]).manifests.find((manifest) => manifest.kind === 'Deployment') as Manifest;
    const pod = (deployment.spec['template'] as { spec: { containers: Array<{ image: string }> } }).spec;
    expect(pod.containers[0]?.image).toBe(`model-gateway:${String(chart['appVersion'])}`);
  });

  it('every template file is one the chart renders or a helper (no stray file helm would render)', () => {
    for (const file of templates.keys()) expect(file).toMatch(/\.yaml$|^_.*\.tpl$|^NOTES\.txt$/);
  });
});

describe('NOTES.txt (subset renderer: helm template prints no notes)', () => {
  it('default values: how to reach the gateway and the dashboard, read the generated key, and that the image must be pushed', () => {
    const notes = renderNotes([]);
    expect(notes).toContain('kubectl --namespace default port-forward svc/gw-model-gateway 8080:8080');
    expect(notes).toContain('http://127.0.0.1:8080/v1');
    expect(notes).toContain('http://127.0.0.1:8080/dashboard');
    expect(notes).toContain('http://gw-model-gateway.default.svc:8080');
    expect(notes).toContain("get secret gw-model-gateway-master-key -o jsonpath='{.data.master-key}' | base64 -d");
    expect(notes).toContain('generated by the chart');
    expect(notes).toContain('SQLite on the PersistentVolumeClaim gw-model-gateway-data');
    expect(notes).toContain('--set image.repository=<registry>/model-gateway');
  });

  it('a given Secret, a pushed image, an emptyDir and a LoadBalancer Service say so', () => {
    const notes = renderNotes([
      ...withKey,
      'image.repository=registry.example.com/model-gateway',
      'persistence.enabled=false',
      'service.type=LoadBalancer',
    ]);
    expect(notes).toContain('get secret gateway-secrets');
    expect(notes).not.toContain('generated by the chart');
    expect(notes).not.toContain('image.repository=<registry>');
    expect(notes).toContain('LOST when the pod goes');
    expect(notes).toContain('get svc gw-model-gateway shows its outside address');
  });
});
