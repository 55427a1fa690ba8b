import { Command, InvalidArgumentError, Option } from 'commander';
import { NetintelError } from '../errors.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../output/formatter.js';
import { parseFieldList } from '../output/record-schema.js';
import { configFilePath, readConfigFile } from './config-file.js';

/** The options every command shares, resolved flag > env > config file > default. */
export interface GlobalOptions {
  format: OutputFormat;
  fields: string[] | null;
  header: boolean;
  dataDir: string | null;
  timeoutMs: number;
  concurrency: number;
  quiet: boolean;
  verbose: boolean;
  color: boolean;
}

function positiveInteger(name: string, max: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < 1 || number > max) {
      throw new InvalidArgumentError(`${name} must be an integer from 1 to ${max}, not ${JSON.stringify(value)}`);
    }
    return number;
  };
}

/** Declares the global options (with their NETINTEL_* variables) on the program. */
export function addGlobalOptions(program: Command): void {
  program
    .addOption(new Option('-f, --format <format>', 'output format').choices(OUTPUT_FORMATS).default('table').env('NETINTEL_FORMAT'))
    .addOption(new Option('--fields <list>', 'fields to show: groups (location,network,security) or dot paths (location.city)').env('NETINTEL_FIELDS'))
    .addOption(new Option('--no-header', 'csv: leave out the header row'))
    .addOption(new Option('--data-dir <dir>', 'directory whose datasets override the bundled ones').env('NETINTEL_DATA_DIR'))
    .addOption(
      new Option('-t, --timeout <ms>', 'deadline of one network lookup, in milliseconds')
        .argParser(positiveInteger('--timeout', 600_000))
        .default(5000)
        .env('NETINTEL_TIMEOUT'),
    )
    .addOption(
      new Option('-c, --concurrency <n>', 'lookups in flight at once in bulk runs')
        .argParser(positiveInteger('--concurrency', 10_000))
        .default(64)
        .env('NETINTEL_CONCURRENCY'),
    )
    .addOption(new Option('-q, --quiet', 'no diagnostics on stderr but errors').env('NETINTEL_QUIET'))
    .addOption(new Option('-v, --verbose', 'more diagnostics on stderr').env('NETINTEL_VERBOSE'));
}

const CONFIG_KEYS: Record<string, { option: string; parse?: (value: string) => unknown }> = {
  format: { option: 'format' },
  fields: { option: 'fields' },
  header: { option: 'header' },
  'data-dir': { option: 'dataDir' },
  timeout: { option: 'timeout', parse: positiveInteger('timeout', 600_000) },
  concurrency: { option: 'concurrency', parse: positiveInteger('concurrency', 10_000) },
  quiet: { option: 'quiet' },
  verbose: { option: 'verbose' },
};

/**
 * Applies the config file's values with source 'config', which commander
 * lets environment variables and flags override.
 */
export function applyConfigFile(program: Command, env: Readonly<Record<string, string | undefined>>): void {
  const path = configFilePath(env);
  const config = readConfigFile(path);
  for (const [key, value] of Object.entries(config)) {
    const entry = CONFIG_KEYS[key];
    if (!entry) continue; // keys of other commands (resolver, server, ...) are read where they apply
    let parsed: unknown = value;
    try {
      if (entry.parse) parsed = entry.parse(String(value));
      if (entry.option === 'format' && !(OUTPUT_FORMATS as readonly string[]).includes(String(value))) {
        throw new InvalidArgumentError(`format must be one of ${OUTPUT_FORMATS.join(', ')}`);
      }
    } catch (error) {
      throw new NetintelError('usage', `config file ${path}: "${key}": ${(error as Error).message}`, { details: { path, key } });
    }
    program.setOptionValueWithSource(entry.option, parsed, 'config');
  }
}

/** Reads the resolved global options off a command. */
export function globalOptionsOf(command: Command, env: Readonly<Record<string, string | undefined>>, stdoutIsTty: boolean): GlobalOptions {
  const raw = command.optsWithGlobals<Record<string, unknown>>();
  const fields = typeof raw.fields === 'string' ? parseFieldList(raw.fields) : null;
  return {
    format: raw.format as OutputFormat,
    fields,
    header: raw.header !== false,
    dataDir: typeof raw.dataDir === 'string' && raw.dataDir !== '' ? raw.dataDir : null,
    timeoutMs: raw.timeout as number,
    concurrency: raw.concurrency as number,
    quiet: raw.quiet === true,
    verbose: raw.verbose === true,
    color: stdoutIsTty && !env.NO_COLOR && env.TERM !== 'dumb',
  };
}
