import { registerAsnCommand } from '../commands/asn.js';
import { registerBlacklistCommand } from '../commands/blacklist.js';
import { registerBulkCommand } from '../commands/bulk.js';
import { registerDataCommand } from '../commands/data.js';
import { registerDnsCommand } from '../commands/dns.js';
import { registerEmailCommand } from '../commands/email.js';
import { registerIpCommand } from '../commands/ip.js';
import { registerKeysCommand } from '../commands/keys.js';
import { registerMxCommand } from '../commands/mx.js';
import { registerQuotaCommand } from '../commands/quota.js';
import { registerServeCommand } from '../commands/serve.js';
import { registerSmtpCommand } from '../commands/smtp.js';
import { registerSpfCommand } from '../commands/spf.js';
import { registerVpnCommand } from '../commands/vpn.js';
import type { CliIo } from './io.js';
import { runProgram, type CommandRegistration } from './program.js';

export { VERSION } from './program.js';
export { createProcessIo } from './io.js';

/** Every command, in the order `netintel --help` lists them. */
export const ALL_COMMANDS: readonly CommandRegistration[] = [
  registerIpCommand,
  registerAsnCommand,
  registerBulkCommand,
  registerDnsCommand,
  registerSmtpCommand,
  registerMxCommand,
  registerSpfCommand,
  registerEmailCommand,
  registerVpnCommand,
  registerDataCommand,
  registerBlacklistCommand,
  registerServeCommand,
  registerKeysCommand,
  registerQuotaCommand,
];

/** Runs netintel with the arguments after the executable; resolves to the exit code. */
export function main(argv: readonly string[], io: CliIo): Promise<number> {
  return runProgram(argv, io, ALL_COMMANDS);
}
