import { Command, CommanderError } from 'commander';
import { toNetintelError } from '../errors.js';
import { registerAsnCommand } from '../commands/asn.js';
import { registerBlacklistCommand } from '../commands/blacklist.js';
import { registerBulkCommand } from '../commands/bulk.js';
import { registerDataCommand } from '../commands/data.js';
import { registerDnsCommand } from '../commands/dns.js';
import { registerEmailCommand } from '../commands/email.js';
import { registerIpCommand } from '../commands/ip.js';
import { registerKeysCommand } from '../commands/keys.js';
import { registerQuotaCommand } from '../commands/quota.js';
import { registerServeCommand } from '../commands/serve.js';
import { registerSmtpCommand } from '../commands/smtp.js';
import { registerMxCommand } from '../commands/mx.js';
import { registerSpfCommand } from '../commands/spf.js';
import { registerVpnCommand } from '../commands/vpn.js';
import { DBIP_CREDIT } from '../output/schemas/ip-schema.js';
import { exitCodeFor } from './exit-codes.js';
import { addGlobalOptions, applyConfigFile, applyEnvironment } from './global-options.js';
import type { CliIo } from './io.js';
import { createRuntime } from './runtime.js';

export const VERSION = '0.1.0';

/** Builds the program: global options, then one register call per command. */
export function buildProgram(io: CliIo): { program: Command; runtime: ReturnType<typeof createRuntime> } {
  const runtime = createRuntime(io);
  const program = new Command('netintel')
    .description('Network and e-mail diagnostics: IP geolocation and ownership, ASN, DNS and mail checks.')
    .version(VERSION, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .addHelpText('after', `\n${DBIP_CREDIT}. ASN data: RouteViews, NRO and DB-IP (CC BY 4.0).`);
  addGlobalOptions(program);
  registerIpCommand(program, runtime);
  registerAsnCommand(program, runtime);
  registerBulkCommand(program, runtime);
  registerDnsCommand(program, runtime);
  registerSmtpCommand(program, runtime);
  registerMxCommand(program, runtime);
  registerSpfCommand(program, runtime);
  registerEmailCommand(program, runtime);
  registerVpnCommand(program, runtime);
  registerDataCommand(program, runtime);
  registerBlacklistCommand(program, runtime);
  registerServeCommand(program, runtime);
  registerKeysCommand(program, runtime);
  registerQuotaCommand(program, runtime);
  for (const command of program.commands) command.exitOverride().configureOutput(program.configureOutput());
  return { program, runtime };
}

/**
 * Runs netintel with the arguments after the executable and returns the exit
 * code; the only place that turns errors into exit codes. Never calls
 * process.exit (it would cut piped output short).
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const { program, runtime } = buildProgram(io);
  try {
    applyConfigFile(program, io.env);
    applyEnvironment(program, io.env);
    await program.parseAsync([...argv], { from: 'user' });
    return runtime.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) return 0;
      return exitCodeFor('usage');
    }
    const failure = toNetintelError(error);
    const format = program.getOptionValueSource('format') === 'default' ? (formatFlag(argv) ?? io.env.NETINTEL_FORMAT) : program.opts().format;
    const wantsRecord = format === 'json' || format === 'ndjson';
    if (wantsRecord) io.stdout.write(`${JSON.stringify({ error: failure.toJSON() })}\n`);
    io.stderr.write(`netintel: ${failure.message}\n`);
    if (failure.code === 'internal' && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
    return exitCodeFor(failure.code);
  } finally {
    await runtime.close();
  }
}

/**
 * The format a `-f`/`--format` flag asks for, read from the raw arguments:
 * the config file and the environment are applied before commander parses
 * them, so a failure there must still honour `-f json`.
 */
function formatFlag(argv: readonly string[]): string | undefined {
  let format: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg === '-f' || arg === '--format') format = argv[++i];
    else if (arg.startsWith('--format=')) format = arg.slice('--format='.length);
    else if (/^-f./.test(arg)) format = arg.slice(2);
  }
  return format;
}
