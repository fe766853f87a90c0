import cluster from 'node:cluster';
import { dispatch, isGatewayMessage, tagged, type Handlers, type PrimaryMessage, type WorkerMessage } from './protocol.ts';

/** A worker's channel to the cluster primary: typed messages, and one question (`gatherMetrics`). */
export class PrimaryLink {
  readonly workerId: number;
  private readonly handlers: Handlers<PrimaryMessage> = {};
  private nextId = 1;
  private readonly gathering = new Map<number, { resolve(text: string): void; reject(error: Error): void }>();
  private closed = false;

  constructor() {
    this.workerId = cluster.worker?.id ?? 0;
    this.handlers['metrics.gathered'] = ({ id, text }) => {
      const waiting = this.gathering.get(id);
      this.gathering.delete(id);
      if (text === null) waiting?.reject(new Error('the metrics of the workers could not be aggregated'));
      else waiting?.resolve(text);
    };
    process.on('message', (message: unknown) => {
      if (isGatewayMessage<PrimaryMessage>(message)) dispatch(this.handlers, message);
    });
    process.once('disconnect', () => this.close());
  }

  send(message: WorkerMessage): void {
    if (this.closed) return;
    // The callback takes a failed write (the primary is gone: 'disconnect' follows) instead of an 'error' event.
    process.send?.(tagged(message), undefined, {}, () => undefined);
  }

  on<K extends PrimaryMessage['type']>(type: K, handler: Handlers<PrimaryMessage>[K]): void {
    this.handlers[type] = handler;
  }

  /** The metrics of every worker, aggregated by the primary (cluster/metrics-gather.ts). */
  gatherMetrics(): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the cluster primary is gone'));
    const id = this.nextId++;
    const answer = new Promise<string>((resolve, reject) => this.gathering.set(id, { resolve, reject }));
    this.send({ type: 'metrics.gather', id });
    return answer;
  }

  private close(): void {
    this.closed = true;
    for (const waiting of this.gathering.values()) waiting.reject(new Error('the cluster primary is gone'));
    this.gathering.clear();
  }
}
