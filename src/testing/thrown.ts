type ErrorClass<T extends Error> = abstract new (...args: never[]) => T;

/** The error of class `type` that `action` throws; fails the test when it throws none or another. */
export function thrown<T extends Error>(type: ErrorClass<T>, action: () => unknown): T {
  try {
    action();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected ${type.name} to be thrown`);
}

/** The error of class `type` that `promise` rejects with. */
export async function rejected<T extends Error>(type: ErrorClass<T>, promise: Promise<unknown>): Promise<T> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a rejection with ${type.name}`);
}
