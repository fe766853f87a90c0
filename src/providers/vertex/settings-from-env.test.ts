import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../errors/config-error.ts';
import { loadSettings } from '../../config/load.ts';
import { thrown } from '../../testing/thrown.ts';

const load = (yaml: string, env: Record<string, string> = {}) => {
  const directory = mkdtempSync(join(tmpdir(), 'vertex-config-'));
  writeFileSync(join(directory, 'config.yaml'), yaml);
  return loadSettings({ argv: [], env, cwd: directory });
};

describe('vertex instances', () => {
  it('take project and location from Google variables and read the credentials file', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'vertex-sa-')), 'sa.json');
    writeFileSync(file, '{"type":"service_account","project_id":"p"}');
    const yaml = `providers:\n  vx:\n    type: vertex\n    credentials: ${file}\n    models: [gemini-2.5-flash]\n`;
    const { settings } = load(yaml, { GOOGLE_CLOUD_PROJECT: 'from-env', GOOGLE_CLOUD_LOCATION: 'europe-west4' });
    expect(settings.providers[0]).toMatchObject({
      type: 'vertex',
      baseUrl: '',
      apiKey: null,
      options: { project: 'from-env', location: 'europe-west4', credentialsJson: '{"type":"service_account","project_id":"p"}' },
    });
  });

  it('are declared by the environment too (VERTEX_MODELS with GOOGLE_CLOUD_PROJECT)', () => {
    const { settings } = loadSettings({
      argv: [],
      env: { VERTEX_MODELS: 'gemini-2.5-flash', GOOGLE_CLOUD_PROJECT: 'p' },
      cwd: mkdtempSync(join(tmpdir(), 'vertex-env-')),
    });
    expect(settings.providers).toMatchObject([{ name: 'vertex', type: 'vertex', models: ['gemini-2.5-flash'], options: { project: 'p' } }]);
  });

  it('keeps the entry settings over the variables', () => {
    const yaml = 'providers:\n  vx:\n    type: vertex\n    project: mine\n    location: global\n';
    const { settings } = load(yaml, { GOOGLE_CLOUD_PROJECT: 'other', GOOGLE_CLOUD_LOCATION: 'us-east5' });
    expect(settings.providers[0]?.options).toEqual({ project: 'mine', location: 'global' });
  });

  it('stops on a missing credentials file or credentials that are not JSON', () => {
    const missing = thrown(ConfigError, () => load('providers:\n  vx:\n    type: vertex\n    credentials: /nonexistent/sa.json\n'));
    expect(missing.key).toBe('providers.vx.credentials');
    const inline = thrown(ConfigError, () => load("providers:\n  vx:\n    type: vertex\n    credentials_json: 'not json'\n"));
    expect(inline.key).toBe('providers.vx.credentials_json');
  });
});
