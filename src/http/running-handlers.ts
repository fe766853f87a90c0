import type { FastifyInstance, RouteOptions } from 'fastify';

type Handler = RouteOptions['handler'];

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * Counts route handlers still running. A stream relay reports its usage when its handler
 * ends, and at the shutdown deadline that is after the connections were cut: shutdown waits
 * here before the last usage flush, so a stream cut by the deadline is recorded too.
 */
export class RunningHandlers {
  #count = 0;
  #waiters: Array<() => void> = [];

  get count(): number {
    return this.#count;
  }

  /** Wraps every route declared on `app` from now on (call it before any route is added). */
  install(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      route.handler = this.#wrap(route.handler);
    });
  }

  /** Resolves once no handler runs, or after `timeoutMs`; true when idle. */
  async idle(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.#waiters.push(() => resolve(true)));
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const result = await Promise.race([idle, timedOut]);
    clearTimeout(timer);
    return result;
  }

  #wrap(handler: Handler): Handler {
    const enter = (): void => {
      this.#count += 1;
    };
    const leave = (): void => this.#leave();
    // `then` with both callbacks, made once: `finally` costs two more promises and ticks a request.
    const settled = (value: unknown): unknown => {
      leave();
      return value;
    };
    const failed = (error: unknown): never => {
      leave();
      throw error;
    };
    return function (this: FastifyInstance, request, reply) {
      enter();
      let result: unknown;
      try {
        result = handler.call(this, request, reply);
      } catch (error) {
        leave();
        throw error;
      }
      if (!isThenable(result)) {
        leave();
        return result;
      }
      return result.then(settled, failed);
    } as Handler;
  }

  #leave(): void {
    this.#count -= 1;
    if (this.#count > 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
