import { describe, expect, it } from 'vitest';
import {
  azureBaseUrlOf,
  azureEndpointOf,
  azureUrlOf,
  defaultAzureApiVersion,
  azureRealtimeUrl,
  isDeploymentScoped,
  previewApiVersion,
} from './azure-urls.ts';

const resource = 'https://contoso.openai.azure.com';

describe('azureEndpointOf', () => {
  it('is the classic deployment style with the default GA api-version', () => {
    expect(azureEndpointOf(`${resource}/`, undefined)).toEqual({ resource, style: 'deployments', apiVersion: defaultAzureApiVersion });
    expect(azureEndpointOf(`${resource}/openai`, '2025-04-01-preview')).toEqual({
      resource,
      style: 'deployments',
      apiVersion: '2025-04-01-preview',
    });
  });

  it('is the v1 API for api_version v1 or preview, or a base_url ending in /openai/v1', () => {
    expect(azureEndpointOf(resource, 'v1')).toEqual({ resource, style: 'v1', apiVersion: null });
    expect(azureEndpointOf(resource, 'preview')).toEqual({ resource, style: 'v1', apiVersion: 'preview' });
    expect(azureEndpointOf(`${resource}/openai/v1/`, undefined)).toEqual({ resource, style: 'v1', apiVersion: null });
  });
});

describe('azureUrlOf, classic deployment style', () => {
  const endpoint = azureEndpointOf(resource, '2024-10-21');
  const url = (path: string, deployment: string | null = 'gpt-4o-prod'): string => azureUrlOf(endpoint, path, deployment).toString();

  it('puts per-deployment operations under /openai/deployments/{deployment}', () => {
    expect(url('chat/completions')).toBe(`${resource}/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21`);
    for (const path of ['embeddings', 'completions', 'audio/speech', 'audio/transcriptions', 'audio/translations', 'images/generations']) {
      expect(url(path)).toBe(`${resource}/openai/deployments/gpt-4o-prod/${path}?api-version=2024-10-21`);
    }
    expect(url('chat/completions', 'a b/c')).toBe(`${resource}/openai/deployments/a%20b%2Fc/chat/completions?api-version=2024-10-21`);
  });

  it('puts files, batches and responses under /openai, keeping their query', () => {
    expect(url('files', null)).toBe(`${resource}/openai/files?api-version=2024-10-21`);
    expect(url('files?purpose=batch&limit=2', null)).toBe(`${resource}/openai/files?purpose=batch&limit=2&api-version=2024-10-21`);
    expect(url('files/file-abc/content', null)).toBe(`${resource}/openai/files/file-abc/content?api-version=2024-10-21`);
    expect(url('batches/batch_1/cancel', null)).toBe(`${resource}/openai/batches/batch_1/cancel?api-version=2024-10-21`);
    expect(url('responses')).toBe(`${resource}/openai/responses?api-version=${previewApiVersion}`);
    expect(url('responses/resp_1/input_items', null)).toBe(
      `${resource}/openai/responses/resp_1/input_items?api-version=${previewApiVersion}`,
    );
    const recent = azureEndpointOf(resource, '2025-04-15-preview');
    expect(azureUrlOf(recent, 'responses', null).searchParams.get('api-version')).toBe('2025-04-15-preview');
    expect(url('models', null)).toBe(`${resource}/openai/models?api-version=2024-10-21`);
  });

  it('keeps an api-version the path carries and Azure-native paths as given', () => {
    expect(url('responses?api-version=2025-03-01-preview')).toBe(`${resource}/openai/responses?api-version=2025-03-01-preview`);
    expect(url('openai/deployments/d/chat/completions?api-version=2024-06-01', null)).toBe(
      `${resource}/openai/deployments/d/chat/completions?api-version=2024-06-01`,
    );
  });
});

describe('azureUrlOf, v1 API', () => {
  it('puts every path under /openai/v1 and adds api-version only for preview', () => {
    expect(azureUrlOf(azureEndpointOf(resource, 'v1'), 'chat/completions', 'gpt-4o-prod').toString()).toBe(
      `${resource}/openai/v1/chat/completions`,
    );
    expect(azureUrlOf(azureEndpointOf(resource, 'v1'), 'files?purpose=batch', null).toString()).toBe(
      `${resource}/openai/v1/files?purpose=batch`,
    );
    expect(azureUrlOf(azureEndpointOf(resource, 'preview'), 'responses', 'd').toString()).toBe(
      `${resource}/openai/v1/responses?api-version=preview`,
    );
  });
});

describe('azureBaseUrlOf and isDeploymentScoped', () => {
  it('gives the base the passthrough and realtime resolve under', () => {
    expect(azureBaseUrlOf(azureEndpointOf(resource, undefined))).toBe(`${resource}/openai`);
    expect(azureBaseUrlOf(azureEndpointOf(resource, 'v1'))).toBe(`${resource}/openai/v1`);
  });

  it('tells per-deployment operations apart', () => {
    expect(isDeploymentScoped('chat/completions')).toBe(true);
    expect(isDeploymentScoped('/embeddings?x=1')).toBe(true);
    expect(isDeploymentScoped('files')).toBe(false);
    expect(isDeploymentScoped('responses')).toBe(false);
  });
});

describe('azureRealtimeUrl', () => {
  const query = new URLSearchParams('model=gpt-realtime&intent=conversation');

  it('names the deployment and a preview api-version on the classic route', () => {
    const ga = new URL(azureRealtimeUrl(azureEndpointOf(resource, '2024-10-21'), query, 'rt-prod'));
    expect(`${ga.protocol}//${ga.host}${ga.pathname}`).toBe('wss://contoso.openai.azure.com/openai/realtime');
    expect(Object.fromEntries(ga.searchParams)).toEqual({
      intent: 'conversation',
      deployment: 'rt-prod',
      'api-version': previewApiVersion,
    });
    const preview = new URL(azureRealtimeUrl(azureEndpointOf(resource, '2024-12-17-preview'), query, 'rt-prod'));
    expect(preview.searchParams.get('api-version')).toBe('2024-12-17-preview');
  });

  it('puts the deployment in model on the v1 route', () => {
    const url = new URL(azureRealtimeUrl(azureEndpointOf('http://127.0.0.1:9/openai/v1', undefined), query, 'rt-prod'));
    expect(url.toString()).toBe('ws://127.0.0.1:9/openai/v1/realtime?model=rt-prod&intent=conversation');
  });
});
