import { registerAsnCommand } from '../commands/asn.js';
import { registerIpCommand } from '../commands/ip.js';
import { registerVpnCommand } from '../commands/vpn.js';
import type { CliIo } from './io.js';

export { createProcessIo } from './io.js';
import { runProgram, type CommandRegistration } from './program.js';

/**
 * The one-off lookup commands on their own. bin/netintel.js runs them from
 * a bundle of this entry when the first argument names one of them: a start
 * that reads, compiles and initialises only what these commands need is
 * about half the cost of the whole CLI's (bench/). The commands are the
 * same modules as in main.ts, so their behaviour is the same.
 */
export const LOOKUP_COMMANDS: readonly CommandRegistration[] = [registerIpCommand, registerAsnCommand, registerVpnCommand];

/** Names bin/netintel.js routes here; kept in step with LOOKUP_COMMANDS by a test. */
export const LOOKUP_COMMAND_NAMES: readonly string[] = ['ip', 'asn', 'vpn'];

export function main(argv: readonly string[], io: CliIo): Promise<number> {
  return runProgram(argv, io, LOOKUP_COMMANDS);
}
