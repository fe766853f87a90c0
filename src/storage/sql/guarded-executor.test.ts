import { describe, expect, it } from 'vitest';
import { isStorageUnavailable } from './guarded-executor.ts';

const withCode = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('isStorageUnavailable', () => {
  it('recognises a database that cannot be reached', () => {
    expect(isStorageUnavailable(withCode('ECONNREFUSED'))).toBe(true);
    expect(isStorageUnavailable(withCode('57P01'))).toBe(true);
    expect(isStorageUnavailable(withCode('08006'))).toBe(true);
    expect(isStorageUnavailable(withCode('SQLITE_BUSY'))).toBe(true);
    expect(isStorageUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('leaves bugs alone', () => {
    expect(isStorageUnavailable(withCode('23505', 'duplicate key value'))).toBe(false);
    expect(isStorageUnavailable(withCode('42601', 'syntax error'))).toBe(false);
    expect(isStorageUnavailable(withCode('SQLITE_CONSTRAINT_UNIQUE'))).toBe(false);
    expect(isStorageUnavailable('not an error')).toBe(false);
  });
});
