import { Option, type Command } from 'commander';
import { DEFAULT_FAN_OUT, type FanOutLimits } from '../engine/fan-out.js';
import { NetintelError } from '../errors.js';
import { integerIn } from './integer-option.js';

/** The caps of how far one check fans out from DNS answers (engine/fan-out.ts), as the commands that fan out take them. */
export interface FanOutFlags {
  maxMx?: number;
  maxAddresses?: number;
  maxSmtpConnections?: number;
}

export type FanOutFlag = 'max-mx' | 'max-addresses' | 'max-smtp-connections';

/** The highest value each flag takes: a run may check a lot on purpose, not without bound. */
const MAX_CAP = 1000;

const FLAGS: Record<FanOutFlag, { key: keyof FanOutFlags; option: () => Option }> = {
  'max-mx': {
    key: 'maxMx',
    option: () => new Option('--max-mx <n>', `MX hosts of a domain to look up and check, by preference (default ${DEFAULT_FAN_OUT.maxMxHosts})`).argParser(integerIn('--max-mx', 1, MAX_CAP)),
  },
  'max-addresses': {
    key: 'maxAddresses',
    option: () => new Option('--max-addresses <n>', `addresses of one host to use, A before AAAA (default ${DEFAULT_FAN_OUT.maxAddresses})`).argParser(integerIn('--max-addresses', 1, MAX_CAP)),
  },
  'max-smtp-connections': {
    key: 'maxSmtpConnections',
    option: () =>
      new Option('--max-smtp-connections <n>', `SMTP connections one check opens (default ${DEFAULT_FAN_OUT.maxSmtpConnections})`).argParser(integerIn('--max-smtp-connections', 1, MAX_CAP)),
  },
};

/** Declares the cap flags a command takes. */
export function addFanOutOptions(command: Command, which: readonly FanOutFlag[]): Command {
  for (const option of fanOutOptions(which)) command.addOption(option);
  return command;
}

/** The cap options themselves, in the order named. */
export function fanOutOptions(which: readonly FanOutFlag[]): Option[] {
  return which.map((flag) => FLAGS[flag].option());
}

/** The caps of a run: the flags given, the defaults for the rest. */
export function fanOutOf(flags: FanOutFlags): FanOutLimits {
  return {
    maxMxHosts: flags.maxMx ?? DEFAULT_FAN_OUT.maxMxHosts,
    maxAddresses: flags.maxAddresses ?? DEFAULT_FAN_OUT.maxAddresses,
    maxSmtpConnections: flags.maxSmtpConnections ?? DEFAULT_FAN_OUT.maxSmtpConnections,
  };
}

/**
 * Refuses the cap flags in remote mode, where the server checks with its
 * own caps (a caller cannot raise them).
 *
 * @throws NetintelError `usage` naming the first flag given.
 */
export function refuseRemoteFanOut(flags: FanOutFlags, command: string): void {
  const given = (Object.keys(FLAGS) as FanOutFlag[]).find((flag) => flags[FLAGS[flag].key] !== undefined);
  if (given === undefined) return;
  throw new NetintelError('usage', `remote mode cannot send --${given}: the server checks with its own caps; run netintel ${command} without --server for it`);
}
