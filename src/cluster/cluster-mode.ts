import cluster from 'node:cluster';

// What src/main.ts loads when WORKERS > 1 (and only then).
export { runPrimary } from './primary.ts';
export { joinCluster } from './worker.ts';

export function isPrimary(): boolean {
  return cluster.isPrimary;
}
