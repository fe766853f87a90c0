import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LogDestination } from './log-destination.ts';

/** A pipe whose reader has stopped: every write stays pending until `release`. */
function stalledPipe(): { output: Writable; written: string[]; release: () => void } {
  const written: string[] = [];
  const held: Array<() => void> = [];
  const output = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      written.push(chunk.toString());
      held.push(() => callback());
    },
  });
  return { output, written, release: () => held.splice(0).forEach((done) => done()) };
}

describe('LogDestination', () => {
  it('keeps at most 8 MiB pending for a stalled pipe, drops the rest and reports the count once it drains', async () => {
    const { output, written, release } = stalledPipe();
    const destination = new LogDestination(output);
    const line = `${'x'.repeat(1023)}\n`;
    for (let index = 0; index < 9 * 1024; index += 1) destination.write(line); // 9 MiB, returns at once
    expect(output.writableLength).toBeLessThanOrEqual(8 * 1024 * 1024 + line.length);
    const dropped = 9 * 1024 - Math.ceil(output.writableLength / line.length);
    expect(dropped).toBeGreaterThan(0);
    while (output.writableLength > 0) {
      release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    release();
    await new Promise((resolve) => setImmediate(resolve));
    const report = written.map((text) => text.trim()).find((text) => text.includes('log lines dropped'));
    expect(JSON.parse(report ?? '{}')).toMatchObject({ level: 40, dropped_lines: dropped });
  });

  it('waits for pending lines before exit, but never longer than told', async () => {
    const { output } = stalledPipe();
    const destination = new LogDestination(output);
    destination.write('{"msg":"shutdown complete"}\n');
    const started = performance.now();
    await destination.waitUntilWritten(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('stops writing once the pipe broke (EPIPE)', () => {
    const { output, written } = stalledPipe();
    const destination = new LogDestination(output);
    output.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    destination.write('after\n');
    expect(written).toEqual([]);
  });
});
