import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full GC before it marks
 * again (ADR 0025): at most 2x, instead of the up-to-4x V8 picks when a GC looks cheap. Under
 * load the gateway's live heap stays about 19 MB (bench/soak.ts, after a full GC), but the
 * garbage it promotes let the old generation reach about 50 MB and the process about 210 MB
 * (VmHWM) before the next full GC. With 2x the peak of the same c=50 and stream scenarios is
 * about 160 MB, for about 2 full GCs more per 10,000 requests (about +2% main-thread CPU per
 * request; figures in the ADR). Read each time V8 computes the next limit, so setting it at
 * start, before any load, is enough.
 */
export const heapGrowingPercent = 100;

export function applyHeapPolicy(): void {
  setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
}
