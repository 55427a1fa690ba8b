import { OUTPUT_FORMATS } from '../output/formatter.js';
import { takesAddressTargets } from '../commands/address-lookups.js';
import { configFilePath, readConfigFile } from './config-file.js';
import { environmentFlag, OPTION_DEFAULTS, optionsFromValues, settingFor, SETTING_ENTRIES, type GlobalOptions } from './settings.js';

/**
 * The direct path of the lookup commands. A one-off `netintel ip 8.8.8.8` is
 * mostly Node's own start, and of netintel's share about half went to
 * reading, deserialising and running commander and the rest of the
 * command-line layer (bench/README.md). So bin/load-bundle.js first offers
 * the arguments to this reader, which takes only the shapes whose meaning
 * is plain: `ip`, `vpn` or `asn`, then addresses or AS numbers, and the
 * output options below, from flags, NETINTEL_* variables and the config
 * file. It declines everything else (help, host names, lists on stdin,
 * remote mode, DNS settings, an invalid or unknown option) to the full CLI,
 * which reports errors as usual. Taken or not, the same command code
 * (src/commands/address-lookups.ts) runs with the same options; a test runs
 * both paths over a corpus of arguments and settings and compares the bytes.
 */

export type DirectCommand = 'ip' | 'vpn' | 'asn';

export interface DirectRequest {
  command: DirectCommand;
  targets: string[];
  /** The option values found, by option name, as commander would hold them. */
  values: Record<string, unknown>;
}

/** The settings the direct path reads; any other one present sends the run to the full CLI. */
const DIRECT_SETTINGS = new Set(['format', 'fields', 'header', 'data-dir', 'quiet', 'verbose']);

/** Flags that take a value, by spelling, and the option each sets. */
const VALUE_FLAGS: Readonly<Record<string, string>> = { '-f': 'format', '--format': 'format', '--fields': 'fields', '--data-dir': 'dataDir' };
/** Flags without a value, and the option value each sets. */
const SWITCHES: Readonly<Record<string, readonly [string, boolean]>> = {
  '--no-header': ['header', false],
  '-q': ['quiet', true],
  '--quiet': ['quiet', true],
  '-v': ['verbose', true],
  '--verbose': ['verbose', true],
};

/**
 * The request the arguments (after the executable) make, or null when the
 * direct path does not take them. Reads the config file, as the CLI does.
 */
export function readDirectRequest(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): DirectRequest | null {
  const command = argv[0];
  if (command !== 'ip' && command !== 'vpn' && command !== 'asn') return null;
  const values: Record<string, unknown> = { ...OPTION_DEFAULTS };
  if (!applyConfig(values, env) || !applyEnvironment(values, env)) return null;
  const targets: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      targets.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-')) {
      targets.push(arg);
      continue;
    }
    const switched = Object.hasOwn(SWITCHES, arg) ? SWITCHES[arg]! : null;
    if (switched) {
      values[switched[0]] = switched[1];
      continue;
    }
    const flag = valueFlag(arg, argv[i + 1]);
    if (flag === null) return null;
    values[flag.option] = flag.value;
    if (flag.consumesNext) i += 1;
  }
  if (!isFormat(values.format)) return null;
  if (command === 'asn' ? targets.length === 0 : !takesAddressTargets(targets)) return null;
  return { command, targets, values };
}

/** The global options of a request, for the stdout it prints to. */
export function directOptions(request: DirectRequest, env: Readonly<Record<string, string | undefined>>, stdoutIsTty: boolean): GlobalOptions {
  return optionsFromValues(request.values, env, stdoutIsTty, null);
}

/**
 * A flag with a value, spelled `--name value`, `--name=value` or `-fvalue`;
 * null for anything else, and for a value that is missing or looks like a
 * flag (commander would take it as the value; the full CLI decides).
 */
function valueFlag(arg: string, next: string | undefined): { option: string; value: string; consumesNext: boolean } | null {
  if (Object.hasOwn(VALUE_FLAGS, arg)) {
    return next === undefined || next.startsWith('-') ? null : { option: VALUE_FLAGS[arg]!, value: next, consumesNext: true };
  }
  const equals = arg.indexOf('=');
  if (arg.startsWith('--') && equals > 0 && Object.hasOwn(VALUE_FLAGS, arg.slice(0, equals))) {
    return { option: VALUE_FLAGS[arg.slice(0, equals)]!, value: arg.slice(equals + 1), consumesNext: false };
  }
  if (arg.startsWith('-f') && arg.length > 2 && arg[2] !== '-') return { option: 'format', value: arg.slice(2), consumesNext: false };
  return null;
}

function isFormat(value: unknown): boolean {
  return typeof value === 'string' && (OUTPUT_FORMATS as readonly string[]).includes(value);
}

/** The config file's settings, as the CLI applies them; false when one is outside the direct path or the file is unreadable. */
function applyConfig(values: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): boolean {
  let config: Record<string, unknown>;
  try {
    config = readConfigFile(configFilePath(env));
  } catch {
    return false;
  }
  for (const [key, value] of Object.entries(config)) {
    const setting = settingFor(key);
    if (!setting) continue;
    if (!DIRECT_SETTINGS.has(key) || (setting.kind === 'format' && !isFormat(value))) return false;
    values[setting.option] = value;
  }
  return true;
}

/** The NETINTEL_* variables, as the CLI applies them; false when one is outside the direct path. */
function applyEnvironment(values: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>): boolean {
  for (const [key, setting] of SETTING_ENTRIES) {
    const value = setting.env === undefined ? undefined : env[setting.env];
    if (value === undefined || value === '') continue;
    if (!DIRECT_SETTINGS.has(key) || (setting.kind === 'format' && !isFormat(value))) return false;
    values[setting.option] = setting.kind === 'boolean' ? environmentFlag(value) : value;
  }
  return true;
}
