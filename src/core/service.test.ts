import { describe, expect, it } from 'vitest';

import { reloadServices, startServices, stopServices, type Service } from './service.ts';

function recording(calls: string[], name: string, failing: Array<'stop' | 'reload'> = []): Service {
  const step = (what: 'start' | 'stop' | 'reload') => async (): Promise<void> => {
    calls.push(`${what} ${name}`);
    if ((failing as string[]).includes(what)) throw new Error(`${what} ${name} failed`);
  };
  return { name, start: step('start'), stop: step('stop'), reload: step('reload') };
}

describe('the one list of services', () => {
  it('starts in list order and stops in reverse, every service even when one fails to stop', async () => {
    const calls: string[] = [];
    const services = [
      recording(calls, 'storage'),
      { name: 'prices' },
      recording(calls, 'recorders', ['stop']),
      recording(calls, 'catalog'),
    ];
    await startServices(services);
    const failed: string[] = [];
    await stopServices(services, (name) => failed.push(name));
    expect(calls).toEqual(['start storage', 'start recorders', 'start catalog', 'stop catalog', 'stop recorders', 'stop storage']);
    expect(failed).toEqual(['recorders']);
  });

  it('asks every service to re-read after a write elsewhere and returns the failures', async () => {
    const calls: string[] = [];
    const routes: string[] = [];
    const mcp: Service = { name: 'mcp', reload: async (route) => void routes.push(route) };
    const services = [recording(calls, 'api-keys', ['reload']), mcp, recording(calls, 'budgets'), { name: 'prices' }];
    const failures = await reloadServices(services, '/admin/mcp-servers/x/reconnect');
    expect(calls.sort()).toEqual(['reload api-keys', 'reload budgets']);
    expect(routes).toEqual(['/admin/mcp-servers/x/reconnect']);
    expect(failures.map((failure) => (failure as Error).message)).toEqual(['reload api-keys failed']);
  });
});
