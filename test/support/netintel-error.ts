import { expect } from 'vitest';
import { NetintelError } from '../../src/errors.js';

/** The NetintelError that `action` throws; fails the test when it throws something else or nothing. */
export function netintelErrorOf(action: () => unknown): NetintelError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(NetintelError);
    return error as NetintelError;
  }
  throw new Error('expected a NetintelError, nothing was thrown');
}

/** The NetintelError that `promise` rejects with; fails the test when it settles otherwise. */
export async function netintelRejectionOf(promise: Promise<unknown>): Promise<NetintelError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(NetintelError);
  return error as NetintelError;
}
