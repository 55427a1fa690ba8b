import { OPERATIONS } from '../operations/operations.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { contextOf, type Netintel } from './client.js';

/**
 * Runs one of netintel's lookups by name on one target, with its default
 * settings, over the client's data and resolvers: `lookup(client, 'ptr',
 * '192.0.2.1')`. Gives every record of the target (a host name can stand
 * for several addresses), in order; `R` is the lookup's record type
 * (`lookup<AsnResult>(client, 'asn', 'AS15169')`).
 *
 * @throws NetintelError the target's failure (`invalid_input` for a bad
 *   target, `timeout` or `upstream` when DNS did not answer, ...).
 */
export async function lookup<R = unknown>(client: Netintel, name: string, target: string): Promise<R[]> {
  const operation = await OPERATIONS.find((each) => each.name === name)?.load();
  if (operation?.defaults === undefined) throw new NetintelError('usage', `netintel has no lookup named ${JSON.stringify(name)} that runs without settings`);
  try {
    const made = await operation.lookup(contextOf(client), operation.defaults);
    try {
      const outcomes = await made(target);
      const failed = outcomes.find((outcome) => !outcome.ok);
      if (failed && !failed.ok) throw failed.error;
      return outcomes.flatMap((outcome) => (outcome.ok ? [outcome.value as R] : []));
    } finally {
      await made.close?.();
    }
  } catch (error) {
    throw toNetintelError(error);
  }
}
