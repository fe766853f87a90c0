import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { parse, parseAllDocuments } from 'yaml';
import { ChartRenderer, TemplateFailure, type Cluster } from './go-template.ts';

// Renders deploy/helm/model-gateway for the chart tests: with `helm template` wherever a `helm`
// binary is on PATH, else with the Go-template subset renderer of go-template.ts. Helm is not in
// Debian's archive, so these machines (and CI) render with the subset renderer.

export const root = resolve(import.meta.dirname, '..', '..');
export const chartDir = join(root, 'deploy', 'helm', 'model-gateway');
const templatesDir = join(chartDir, 'templates');
const templateFiles = readdirSync(templatesDir).filter((file) => /\.(yaml|tpl|txt)$/.test(file));
export const templates = new Map(templateFiles.map((file) => [file, readFileSync(join(templatesDir, file), 'utf8')]));
export const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Record<string, unknown>;
export const helmAvailable = spawnSync('helm', ['version', '--short'], { encoding: 'utf8' }).status === 0;

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

export interface Rendered {
  ok: boolean;
  manifests: Manifest[];
  stderr: string;
  /** The rendered output, as `helm template` prints it. */
  text: string;
}

export function render(settings: string[]): Rendered {
  return helmAvailable ? renderWithHelm(settings) : renderHere(settings);
}

export function documentsOf(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((document) => document.toJSON() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

export function renderWithHelm(settings: string[]): Rendered {
  const args = ['template', 'gw', chartDir, ...settings.flatMap((setting) => ['--set', setting])];
  const result = spawnSync('helm', args, { encoding: 'utf8' });
  if (result.status !== 0) return { ok: false, manifests: [], stderr: result.stderr, text: '' };
  return { ok: true, manifests: documentsOf(result.stdout), stderr: result.stderr, text: result.stdout };
}

/** The chart's root object (`.`) for release gw in namespace default, with `--set` applied as Helm types it. */
export function rootFor(settings: string[]): Record<string, unknown> {
  const merged = structuredClone(values);
  for (const setting of settings) {
    const [path = '', raw = ''] = setting.split('=');
    const keys = path.split('.');
    const holder = keys.slice(0, -1).reduce<Record<string, unknown>>((node, key) => (node[key] ??= {}) as Record<string, unknown>, merged);
    holder[keys.at(-1) ?? ''] = /^\d+$/.test(raw) ? Number(raw) : raw === 'true' || raw === 'false' ? raw === 'true' : raw;
  }
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, string>;
  return {
    Values: merged,
    Release: { Name: 'gw', Namespace: 'default', Service: 'Helm' },
    Chart: { Name: chart['name'], Version: chart['version'], AppVersion: chart['appVersion'] },
    Template: { BasePath: 'model-gateway/templates' },
  };
}

/** `helm template gw <chart> --set ...` with the subset renderer; `cluster`: what `lookup` finds (install/upgrade). */
export function renderHere(settings: string[], cluster?: Cluster): Rendered {
  const root = rootFor(settings);
  const renderer = new ChartRenderer(templates, 'model-gateway/templates', cluster);
  try {
    const files = [...templates.keys()].filter((file) => file.endsWith('.yaml')).sort();
    const text = files.map((file) => `---\n# Source: model-gateway/templates/${file}\n${renderer.render(file, root)}\n`).join('');
    return { ok: true, manifests: documentsOf(text), stderr: '', text };
  } catch (error) {
    if (error instanceof TemplateFailure) return { ok: false, manifests: [], stderr: `Error: execution error: ${error.message}`, text: '' };
    throw error;
  }
}

export function gatewayEnv(manifests: Manifest[]): Map<string, unknown> {
  const deployment = manifests.find((manifest) => manifest.kind === 'Deployment');
  const template = deployment?.spec['template'] as {
    spec: { containers: Array<{ env: Array<{ name: string; value?: string; valueFrom?: unknown }> }> };
  };
  return new Map(template.spec.containers[0]?.env.map((entry) => [entry.name, entry.value ?? entry.valueFrom]));
}

export const withKey = ['masterKey.existingSecret=gateway-secrets'];
export const scaled = [
  ...withKey,
  'replicaCount=3',
  'postgresql.enabled=true',
  'postgresql.existingSecret=db',
  'redis.enabled=true',
  'redis.existingSecret=redis',
];

/** NOTES.txt as `helm install` prints it (subset renderer: `helm template` prints no notes). */
export function renderNotes(settings: string[]): string {
  return new ChartRenderer(templates, 'model-gateway/templates').render('NOTES.txt', rootFor(settings));
}
