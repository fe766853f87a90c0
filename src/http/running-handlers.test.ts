import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { RunningHandlers } from './running-handlers.ts';

describe('RunningHandlers', () => {
  it('counts async and sync handlers until they end, and idle() waits for the last one', async () => {
    const running = new RunningHandlers();
    const app = Fastify();
    running.install(app);
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    app.get('/slow', async () => {
      await finished;
      return { ok: true };
    });
    app.get('/sync', (_request, reply) => {
      void reply.send({ sync: true });
    });
    await app.ready();

    expect((await app.inject('/sync')).json()).toEqual({ sync: true });
    expect(running.count).toBe(0);
    const slow = app.inject('/slow');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(running.count).toBe(1);
    expect(await running.idle(50)).toBe(false);
    const idle = running.idle(5_000);
    finish();
    expect(await idle).toBe(true);
    expect((await slow).json()).toEqual({ ok: true });
    expect(running.count).toBe(0);
    await app.close();
  });

  it('counts a handler that throws as ended', async () => {
    const running = new RunningHandlers();
    const app = Fastify();
    running.install(app);
    app.get('/throws', () => {
      throw new Error('boom');
    });
    expect((await app.inject('/throws')).statusCode).toBe(500);
    expect(running.count).toBe(0);
    expect(await running.idle(10)).toBe(true);
    await app.close();
  });
});
