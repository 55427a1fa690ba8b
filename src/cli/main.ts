import type { CliIo } from './io.js';
import { runProgram, type CommandRegistration } from './program.js';

export { VERSION } from './program.js';
export { createProcessIo } from './io.js';

/**
 * Every command by name, in the order `netintel --help` lists them. A
 * command's module (and the engine code behind it) loads when a run needs
 * it: a run of one command builds the program with that command alone, so
 * `netintel ip 8.8.8.8` does not initialise the DNS, mail or server code;
 * any other run (help, an unknown command, a global option first) builds it
 * with every command. Either way the command runs through commander, the
 * same code.
 */
const COMMANDS: ReadonlyArray<readonly [name: string, load: () => Promise<CommandRegistration>]> = [
  ['ip', async () => (await import('../commands/ip.js')).registerIpCommand],
  ['asn', async () => (await import('../commands/asn.js')).registerAsnCommand],
  ['bulk', async () => (await import('../commands/bulk.js')).registerBulkCommand],
  ['range', async () => (await import('../commands/range.js')).registerRangeCommand],
  ['dns', async () => (await import('../commands/dns.js')).registerDnsCommand],
  ['smtp', async () => (await import('../commands/smtp.js')).registerSmtpCommand],
  ['mx', async () => (await import('../commands/mx.js')).registerMxCommand],
  ['spf', async () => (await import('../commands/spf.js')).registerSpfCommand],
  ['dkim', async () => (await import('../commands/dkim.js')).registerDkimCommand],
  ['bimi', async () => (await import('../commands/bimi.js')).registerBimiCommand],
  ['email', async () => (await import('../commands/email.js')).registerEmailCommand],
  ['vpn', async () => (await import('../commands/vpn.js')).registerVpnCommand],
  ['grep', async () => (await import('../commands/grep.js')).registerGrepCommand],
  ['summarize', async () => (await import('../commands/summarize.js')).registerSummarizeCommand],
  ['data', async () => (await import('../commands/data.js')).registerDataCommand],
  ['blacklist', async () => (await import('../commands/blacklist.js')).registerBlacklistCommand],
  ['serve', async () => (await import('../commands/serve.js')).registerServeCommand],
  ['keys', async () => (await import('../commands/keys.js')).registerKeysCommand],
  ['accounts', async () => (await import('../commands/accounts.js')).registerAccountsCommand],
  ['quota', async () => (await import('../commands/quota.js')).registerQuotaCommand],
  ['completion', async () => (await import('../commands/completion.js')).registerCompletionCommand],
];

/** The names of every command, in help order. */
export const COMMAND_NAMES: readonly string[] = COMMANDS.map(([name]) => name);

/** Runs netintel with the arguments after the executable; resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  // A completion script covers every command: that run builds them all.
  const named = argv[0] === 'completion' ? undefined : COMMANDS.find(([name]) => name === argv[0]);
  const registrations = await Promise.all((named === undefined ? COMMANDS : [named]).map(([, load]) => load()));
  return runProgram(argv, io, registrations);
}
