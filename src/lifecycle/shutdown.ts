import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { stopServices, type Service } from '../core/service.ts';
import { GatewayError } from '../errors/gateway-error.ts';

export interface ShutdownOptions {
  app: FastifyInstance;
  logger: Logger;
  /** How long in-flight requests and streams may run on after the signal. */
  timeoutMs: number;
  /** The one list of services: stopped in reverse once the server has closed (flush usage, close pools, ...). */
  services: readonly Service[];
  /** Resolves once no route handler runs (true), or after the time given (false). */
  handlersIdle?: (timeoutMs: number) => Promise<boolean>;
  /**
   * At the deadline, before connections are closed: ends the upstream calls still running with
   * a `shutting_down` error, so each stream's relay writes its dialect's error event and ends
   * (a client SDK raises a clear error, not a network one) and a waiting JSON call answers 503.
   */
  cutUpstreamCalls?: (error: GatewayError) => void;
  /** Waits (bounded) until the log lines written so far have left the process. */
  flushLogs?: (timeoutMs: number) => Promise<void>;
}

const idleSweepMs = 100;
/** How long handlers whose connections were cut at the deadline get to report their usage. */
const reportGraceMs = 5_000;
const logFlushTimeoutMs = 2_000;
/** How long the relays get, after their upstream calls were cut, to write their error event before connections close. */
const cutGraceMs = 500;
/**
 * A signal repeated within this window is the same request delivered twice: Ctrl-C under
 * `npm start` reaches the gateway from the terminal (the process group) and from npm.
 */
const repeatedSignalWindowMs = 2_000;

/**
 * Graceful shutdown on SIGTERM/SIGINT: stop accepting, let in-flight requests and streams
 * finish (bounded by the timeout), let the handlers of cut streams report, stop the services,
 * exit 0. A second signal later than `repeatedSignalWindowMs` after the first exits at once.
 */
export function installShutdown(options: ShutdownOptions): void {
  let firstSignalAt: number | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (firstSignalAt === null) {
      firstSignalAt = Date.now();
      void shutdown(options, signal);
    } else if (Date.now() - firstSignalAt < repeatedSignalWindowMs) {
      options.logger.info({ signal }, 'signal repeated while draining: still draining (a later one exits at once)');
    } else {
      options.logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

async function shutdown(options: ShutdownOptions, signal: NodeJS.Signals): Promise<void> {
  const { logger } = options;
  logger.info({ signal, timeout_ms: options.timeoutMs }, 'shutting down: draining in-flight requests');
  await drain(options);
  // Streams cut at the deadline report their usage as their handlers end: before the last flush.
  if (options.handlersIdle !== undefined && !(await options.handlersIdle(reportGraceMs))) {
    logger.warn({ grace_ms: reportGraceMs }, 'request handlers still running after the connections closed');
  }
  await stopServices(options.services, (service, error) => logger.error({ err: error, service }, 'error during shutdown cleanup'));
  logger.info('shutdown complete');
  await options.flushLogs?.(logFlushTimeoutMs);
  process.exit(0);
}

/** Closes the server: idle connections as they go idle, the rest at the deadline. */
async function drain(options: ShutdownOptions): Promise<void> {
  const { app, logger } = options;
  const server = app.server;
  const sweep = setInterval(() => server.closeIdleConnections(), idleSweepMs);
  let closeAll: NodeJS.Timeout | undefined;
  const deadline = setTimeout(() => {
    if (options.cutUpstreamCalls === undefined) {
      logger.warn('shutdown timeout reached: closing the connections still open');
      server.closeAllConnections();
      return;
    }
    logger.warn(
      { grace_ms: cutGraceMs },
      'shutdown timeout reached: ending streams with an error event, then closing the connections still open',
    );
    options.cutUpstreamCalls(
      new GatewayError('provider_error', 'the gateway is shutting down: the answer was cut at SHUTDOWN_TIMEOUT_SECONDS', {
        status: 503,
        code: 'shutting_down',
      }),
    );
    closeAll = setTimeout(() => server.closeAllConnections(), cutGraceMs);
  }, options.timeoutMs);
  try {
    await app.close();
  } catch (error) {
    logger.error({ err: error }, 'error while closing the server');
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
    clearTimeout(closeAll);
  }
}
