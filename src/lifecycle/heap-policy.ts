import { setFlagsFromString } from 'node:v8';

// V8 heap sizing for the gateway process (ADR 0025). This module is the first import of
// src/main.ts, so these flags are set before the rest of the gateway (fastify, pino, the
// routes) is loaded; that order is what makes the first one work. In the bundle, dist/main.js
// imports this module's chunk alone and only then imports src/main.ts's (scripts/bundle.ts):
// a split bundle evaluates all of an entry's static imports before the entry's own code.

/**
 * While the gateway loads and builds its server, almost everything it allocates survives
 * (modules, routes, schemas), and V8 answers a high survival rate by doubling the young
 * generation: 1 MB semi-spaces became 8 MB, committed and touched, so about 4 MB more RSS
 * after start (74 vs 71 MB) for no speed (start CPU unchanged in an A/B). Growth is held at
 * 1x until `heapPolicyAfterStart()`, which restores V8's default of 2x: under load the young
 * generation grows exactly as before.
 */
setFlagsFromString('--semi-space-growth-factor=1');

/**
 * How far the old generation grows past what survived the last full GC before V8 marks
 * again: at most 2x, instead of the up-to-4x V8 picks when a GC looks cheap. Under load the
 * gateway's live heap stays about 19 MB (bench/soak.ts, after a full GC), but the garbage it
 * promotes let the old generation reach about 50 MB and the process about 210 MB (VmHWM)
 * before the next full GC. With 2x the peak of the same c=50 and stream scenarios is about
 * 160 MB, for about 2 full GCs more per 10,000 requests (about +2% main-thread CPU per
 * request). Read each time V8 computes the next limit, so it holds for the whole run.
 */
export const heapGrowingPercent = 100;
setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);

/** Called once the server listens (or the cluster primary runs): the young generation may grow again. */
export function heapPolicyAfterStart(): void {
  setFlagsFromString('--semi-space-growth-factor=2');
}
