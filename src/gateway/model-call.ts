import type { StreamOutcome } from './run-model-request.ts';

/** A relayed model call's outcome; the name the relay modules still import (run-model-request.ts has the pipeline). */
export type ModelCallOutcome<T> = StreamOutcome<T>;
