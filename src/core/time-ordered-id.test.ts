import { describe, expect, it } from 'vitest';
import { timeOrderedUuid } from './time-ordered-id.ts';

describe('timeOrderedUuid', () => {
  it('is a version 7, RFC 9562 variant UUID carrying the time', () => {
    const id = timeOrderedUuid(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
  });

  it('sorts by time and does not repeat', () => {
    const ids = Array.from({ length: 1000 }, (_unused, index) => timeOrderedUuid(1_700_000_000_000 + index));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 5000 }, () => timeOrderedUuid())).size).toBe(5000);
  });

  it('sorts ids made within one millisecond in the order they were made', () => {
    const ids = Array.from({ length: 100 }, () => timeOrderedUuid(1_800_000_000_000));
    expect([...ids].sort()).toEqual(ids);
  });
});
