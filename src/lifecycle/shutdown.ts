import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

export interface ShutdownOptions {
  app: FastifyInstance;
  logger: Logger;
  /** How long in-flight requests and streams may run on after the signal. */
  timeoutMs: number;
  /** Run after the server has closed, in order (flush usage, close pools, ...). */
  cleanups: ReadonlyArray<() => void | Promise<void>>;
}

const idleSweepMs = 100;

/**
 * Graceful shutdown on SIGTERM/SIGINT: stop accepting, let in-flight requests and streams
 * finish (bounded by the timeout), run the cleanups, exit 0. A second signal exits at once.
 */
export function installShutdown(options: ShutdownOptions): void {
  let shuttingDown = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shuttingDown) {
      options.logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    void shutdown(options, signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

async function shutdown(options: ShutdownOptions, signal: NodeJS.Signals): Promise<void> {
  const { app, logger } = options;
  logger.info({ signal, timeout_ms: options.timeoutMs }, 'shutting down: draining in-flight requests');
  const server = app.server;
  // Connections that finish their last response during the drain are closed as they go idle.
  const sweep = setInterval(() => server.closeIdleConnections(), idleSweepMs);
  const deadline = setTimeout(() => {
    logger.warn('shutdown timeout reached: closing the connections still open');
    server.closeAllConnections();
  }, options.timeoutMs);
  try {
    await app.close();
  } catch (error) {
    logger.error({ err: error }, 'error while closing the server');
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
  for (const cleanup of options.cleanups) {
    try {
      await cleanup();
    } catch (error) {
      logger.error({ err: error }, 'error during shutdown cleanup');
    }
  }
  logger.info('shutdown complete');
  process.exit(0);
}
