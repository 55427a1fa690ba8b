import { Command, InvalidArgumentError, Option } from 'commander';
import { integerIn } from './integer-option.js';
import { NetintelError } from '../errors.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../output/formatter.js';
import { parseFieldList } from '../output/record-schema.js';
import { defaultDataDir } from '../engine/data/data-files.js';
import { environmentSwitch, resolveSetting, sourceName, type Environment, type SettingSource, type SettingSources } from '../setting-sources.js';
import { configFilePath, readConfigFile } from './config-file.js';

/** The options every command shares, resolved flag > env > config file > default. */
export interface GlobalOptions {
  format: OutputFormat;
  fields: string[] | null;
  header: boolean;
  dataDir: string | null;
  timeoutMs: number;
  concurrency: number;
  /** DNS resolvers as given (`ip[:port]`, `https://...`, `tls://...`), or null for the system's. */
  resolvers: string[] | null;
  /** A PEM file of CA certificates trusted for DNS over HTTPS and TLS resolvers besides Node's, or null. */
  resolverCa: string | null;
  /**
   * The file of DS or DNSKEY records DNSSEC validation starts from instead of
   * the IANA root KSKs (`--trust-anchor`, NETINTEL_TRUST_ANCHOR, the config
   * file's "trust-anchor"), where it came from as messages name it, and
   * whether the command line gave it; null for the root's.
   */
  trustAnchor: { file: string; from: string; onCommandLine: boolean } | null;
  dnsTcp: boolean;
  dnsRetries: number;
  quiet: boolean;
  verbose: boolean;
  color: boolean;
  /** Table view: every field of each record (`--all`), not the chosen facts. */
  all: boolean;
  /**
   * Remote mode: the netintel server to ask (`--server`), the API key
   * (`--api-key`) and whether a timeout was given (flag, env or config; else
   * remote mode uses its own default), or null for local lookups.
   */
  remote: { server: string; apiKey: string | null; timeoutGiven?: boolean } | null;
}

/** Defaults of the options that have one, by option name (commander's camel case). */
const OPTION_DEFAULTS = {
  format: 'table',
  header: true,
  timeout: 5000,
  concurrency: 64,
  retries: 2,
} as const;

interface Setting extends SettingSources {
  /** The option's name (commander's camel case). */
  readonly option: string;
  /** The config file's key: the long flag's name. */
  readonly config: string;
  kind: 'text' | 'boolean' | 'format' | 'integer' | 'count' | 'list';
  max?: number;
}

/** The settings a config file or a NETINTEL_* variable may give, by config key (the long flag's name). */
export const SETTINGS = {
  format: { option: 'format', flag: '--format', config: 'format', env: 'NETINTEL_FORMAT', kind: 'format' },
  fields: { option: 'fields', flag: '--fields', config: 'fields', env: 'NETINTEL_FIELDS', kind: 'text' },
  header: { option: 'header', flag: '--no-header', config: 'header', kind: 'boolean' },
  'data-dir': { option: 'dataDir', flag: '--data-dir', config: 'data-dir', env: 'NETINTEL_DATA_DIR', kind: 'text' },
  timeout: { option: 'timeout', flag: '--timeout', config: 'timeout', env: 'NETINTEL_TIMEOUT', kind: 'integer', max: 600_000 },
  concurrency: { option: 'concurrency', flag: '--concurrency', config: 'concurrency', env: 'NETINTEL_CONCURRENCY', kind: 'integer', max: 10_000 },
  resolver: { option: 'resolver', flag: '--resolver', config: 'resolver', env: 'NETINTEL_RESOLVER', kind: 'list' },
  'resolver-ca': { option: 'resolverCa', flag: '--resolver-ca', config: 'resolver-ca', env: 'NETINTEL_RESOLVER_CA', kind: 'text' },
  'trust-anchor': { option: 'trustAnchor', flag: '--trust-anchor', config: 'trust-anchor', env: 'NETINTEL_TRUST_ANCHOR', kind: 'text' },
  tcp: { option: 'tcp', flag: '--tcp', config: 'tcp', env: 'NETINTEL_TCP', kind: 'boolean' },
  retries: { option: 'retries', flag: '--retries', config: 'retries', env: 'NETINTEL_RETRIES', kind: 'count', max: 10 },
  server: { option: 'server', flag: '--server', config: 'server', env: 'NETINTEL_SERVER', kind: 'text' },
  'api-key': { option: 'apiKey', flag: '--api-key', config: 'api-key', env: 'NETINTEL_API_KEY', kind: 'text' },
  quiet: { option: 'quiet', flag: '--quiet', config: 'quiet', env: 'NETINTEL_QUIET', kind: 'boolean' },
  verbose: { option: 'verbose', flag: '--verbose', config: 'verbose', env: 'NETINTEL_VERBOSE', kind: 'boolean' },
} as const satisfies Record<string, Setting>;

/** The setting a config key names, if any. */
function settingFor(key: string): Setting | undefined {
  return Object.hasOwn(SETTINGS, key) ? (SETTINGS as Record<string, Setting>)[key] : undefined;
}

/**
 * The options from the values found for them, by option name, as commander
 * holds them after parsing (defaults, config file, environment and flags
 * applied). Remote mode is worked out by the caller.
 */
export function optionsFromValues(
  raw: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  stdoutIsTty: boolean,
  remote: GlobalOptions['remote'],
  trustAnchor: GlobalOptions['trustAnchor'] = null,
): GlobalOptions {
  return {
    format: raw.format as OutputFormat,
    fields: typeof raw.fields === 'string' ? parseFieldList(raw.fields) : null,
    header: raw.header !== false,
    // Default: the XDG data dir, where `netintel data update` installs; files it lacks come from the bundle.
    dataDir: typeof raw.dataDir === 'string' && raw.dataDir !== '' ? raw.dataDir : defaultDataDir(env),
    timeoutMs: raw.timeout as number,
    concurrency: raw.concurrency as number,
    resolvers: resolverList(raw.resolver),
    resolverCa: typeof raw.resolverCa === 'string' && raw.resolverCa !== '' ? raw.resolverCa : null,
    trustAnchor,
    dnsTcp: raw.tcp === true,
    dnsRetries: raw.retries as number,
    quiet: raw.quiet === true,
    verbose: raw.verbose === true,
    color: stdoutIsTty && !env.NO_COLOR && env.TERM !== 'dumb',
    all: raw.all === true,
    remote,
  };
}

/** Splits a comma-separated list, dropping empty items. */
function splitList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/** `--resolver` values: an array from flags/config, a comma-separated string from NETINTEL_RESOLVER. */
function resolverList(value: unknown): string[] | null {
  const list = Array.isArray(value) ? value.map(String) : typeof value === 'string' ? splitList(value) : [];
  return list.length > 0 ? list : null;
}

/**
 * Declares the global options on the program. Their NETINTEL_* variables are
 * read from the CLI's own environment by `applyEnvironment`, not by commander
 * (which would read process.env), so the description names them.
 */
export function addGlobalOptions(program: Command): void {
  // A --resolver flag's list starts empty, not from NETINTEL_RESOLVER's or the config file's
  // (already set as the option's value when commander parses): flags replace them, never add to them.
  let resolversFromFlags: string[] = [];
  program
    .addOption(new Option('-f, --format <format>', 'output format (env: NETINTEL_FORMAT); value: bare values, one line per record').choices(OUTPUT_FORMATS).default(OPTION_DEFAULTS.format))
    .addOption(new Option('-j, --json', 'short for --format json'))
    .addOption(new Option('--fields <list>', 'fields to show: groups (location,network,security) or dot paths (location.city) (env: NETINTEL_FIELDS)'))
    .addOption(new Option('--no-header', 'csv: leave out the header row'))
    .addOption(new Option('--all', 'table: show every field of each record, empty ones too (the default view shows the key facts)'))
    .addOption(new Option('--data-dir <dir>', 'directory whose datasets override the bundled ones; default $XDG_DATA_HOME/netintel (env: NETINTEL_DATA_DIR)'))
    .addOption(
      new Option('-t, --timeout <ms>', 'deadline of one network lookup, in milliseconds (env: NETINTEL_TIMEOUT)')
        .argParser(integerIn('--timeout', 1, SETTINGS.timeout.max))
        .default(OPTION_DEFAULTS.timeout),
    )
    .addOption(
      new Option('--concurrency <n>', 'network lookups in flight at once over many targets (DNS, mail, remote); local IP lookups need none (env: NETINTEL_CONCURRENCY)')
        .argParser(integerIn('--concurrency', 1, SETTINGS.concurrency.max))
        .default(OPTION_DEFAULTS.concurrency),
    )
    .addOption(
      new Option('--resolver <ip[:port]>', 'DNS resolver to ask: ip[:port], https://host/path (DNS over HTTPS) or tls://host[:port] (DNS over TLS); repeatable or comma-separated; default: the system\'s (env: NETINTEL_RESOLVER)')
        .argParser((value: string) => (resolversFromFlags = [...resolversFromFlags, ...resolverValues('--resolver', value)])),
    )
    .addOption(new Option('--resolver-ca <file>', 'PEM file of CA certificates to trust for https:// and tls:// resolvers besides the built-in ones (env: NETINTEL_RESOLVER_CA)'))
    .addOption(new Option('--trust-anchor <file>', 'DNSSEC (dns --dnssec, email, smtp and tls DANE): validate from the DS or DNSKEY records of this file, not the IANA root KSKs (env: NETINTEL_TRUST_ANCHOR)'))
    .addOption(new Option('--tcp', 'ask DNS over TCP only (env: NETINTEL_TCP)'))
    .addOption(
      new Option('--retries <n>', 'further rounds over the resolvers after a failed one (env: NETINTEL_RETRIES)')
        .argParser(integerIn('--retries', 0, SETTINGS.retries.max))
        .default(OPTION_DEFAULTS.retries),
    )
    .addOption(new Option('--server <url>', 'ask this netintel server (remote mode) instead of the local engine (env: NETINTEL_SERVER)'))
    .addOption(new Option('--api-key <key>', 'API key for --server; without one the server\'s free tier applies (env: NETINTEL_API_KEY)'))
    .addOption(new Option('-q, --quiet', 'no diagnostics on stderr but errors (env: NETINTEL_QUIET)'))
    .addOption(new Option('-v, --verbose', 'more diagnostics on stderr (env: NETINTEL_VERBOSE)'))
    .addOption(new Option('--debug', 'on a bug, show the stack trace, mapped to the sources (env: NETINTEL_DEBUG)'));
  // -j is -f json where it stands: of `-j -f csv` the last one wins, as of two -f.
  program.on('option:json', () => program.setOptionValueWithSource('format', 'json', 'cli'));
}

/**
 * The addresses of a resolver list (comma-separated, or an array in the
 * config file). A list that names none is a mistake: read as "no resolver",
 * it would quietly ask the system's instead of the one meant.
 */
function resolverValues(name: string, value: unknown): string[] {
  const list = (Array.isArray(value) ? value.map(String) : [String(value)]).flatMap(splitList);
  if (list.length === 0) throw new InvalidArgumentError(`${name} needs at least one resolver address (ip[:port]), not ${JSON.stringify(value)}`);
  return list;
}

/** Checks a config or environment value of a setting; throws InvalidArgumentError. */
function settingValue(key: string, kind: Setting, value: unknown): unknown {
  if (kind.kind === 'integer') return integerIn(key, 1, kind.max!)(String(value));
  if (kind.kind === 'count') return integerIn(key, 0, kind.max!)(String(value));
  if (kind.kind === 'list') return resolverValues(key, value);
  // A config file's number or object where a path or a word belongs would otherwise be dropped unseen.
  if (kind.kind === 'text' && typeof value !== 'string') throw new InvalidArgumentError(`${key} must be a string, not ${JSON.stringify(value)}`);
  if (kind.kind === 'format' && !(OUTPUT_FORMATS as readonly string[]).includes(String(value))) {
    throw new InvalidArgumentError(`format must be one of ${OUTPUT_FORMATS.join(', ')}, not ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * Applies the settings the config file and the NETINTEL_* variables of `env`
 * (the CLI's environment, not necessarily process.env) give, with source
 * 'config' or 'env': flags, parsed afterwards, override them. Every known key
 * of the config file is checked first, even one a variable overrides (keys
 * of other commands are read where they apply); a boolean variable is off
 * when it is `0` or `false`.
 */
export function applySettings(program: Command, env: Environment): void {
  const config = checkedConfigFile(env);
  for (const [key, setting] of Object.entries(SETTINGS) as Array<[string, Setting]>) {
    const found = resolveSetting<unknown>(setting, { env, config }, (value, from, source) => (source === 'config' ? value : environmentValue(key, setting, String(value), from)));
    if (found !== undefined) program.setOptionValueWithSource(setting.option, found.value, found.source);
  }
}

/** The config file's values of the global settings, by key, each checked. */
function checkedConfigFile(env: Environment): Record<string, unknown> {
  const path = configFilePath(env);
  const checked: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(readConfigFile(path))) {
    const setting = settingFor(key);
    if (!setting) continue;
    try {
      checked[key] = settingValue(key, setting, value);
    } catch (error) {
      throw new NetintelError('usage', `config file ${path}: "${key}": ${(error as Error).message}`, { details: { path, key } });
    }
  }
  return checked;
}

/** A variable's value of a setting; a bad one is a usage error naming the variable. */
function environmentValue(key: string, setting: Setting, text: string, variable: string): unknown {
  try {
    return setting.kind === 'boolean' ? environmentSwitch(text) : settingValue(key, setting, text);
  } catch (error) {
    throw new NetintelError('usage', `${variable}: ${(error as Error).message}`, { details: { variable } });
  }
}

/** How a command reads `--server`. */
export interface ServerFlagUse {
  /**
   * `email`: a `--server` flag that is not an http(s) URL names the mail
   * server to test, and remote mode takes its URL from NETINTEL_SERVER or the
   * config file instead.
   */
  mayNameMailServer?: boolean;
  /** Commands that work on this machine by nature (serve, keys, data, range, grep): the remote settings are not read at all. */
  localOnly?: boolean;
  /** A command without a remote mode: `--server` is refused (exit 9) rather than quietly ignored. */
  noRemoteMode?: boolean;
}

/** Reads the resolved global options off a command. */
export function globalOptionsOf(
  command: Command,
  env: Readonly<Record<string, string | undefined>>,
  stdoutIsTty: boolean,
  serverUse: ServerFlagUse = {},
): GlobalOptions {
  const raw = command.optsWithGlobals<Record<string, unknown>>();
  const remote = serverUse.localOnly ? null : remoteOf(command, env, raw.apiKey, serverUse.mayNameMailServer === true);
  return optionsFromValues(raw, env, stdoutIsTty, remote, trustAnchorOf(command, raw.trustAnchor));
}

/** The trust anchor file of the options, where it came from, or null when none is given. */
function trustAnchorOf(command: Command, value: unknown): GlobalOptions['trustAnchor'] {
  if (typeof value !== 'string' || value === '') return null;
  const onCommandLine = rootOf(command).getOptionValueSource('trustAnchor') === 'cli';
  return { file: value, from: settingFrom(command, SETTINGS['trust-anchor']), onCommandLine };
}

/** True for an absolute http:// or https:// URL: the only kind of `--server` remote mode can ask. */
export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text.trim());
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The mail server a command-line `--server` names for `email` (`--type smtp
 * --server HOST`): the flag's value when it is not an http(s) URL, else null
 * (then it is the remote-mode URL as for every command).
 */
export function mailServerFlag(command: Command): string | null {
  const root = rootOf(command);
  if (root.getOptionValueSource('server') !== 'cli') return null;
  const value = root.getOptionValue('server') as unknown;
  return typeof value === 'string' && value.trim() !== '' && !isHttpUrl(value) ? value.trim() : null;
}

function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

/** Where a global setting's value came from, for messages: commander's record of it, which applySettings set. */
function settingFrom(command: Command, setting: Setting): string {
  const source = rootOf(command).getOptionValueSource(setting.option);
  return sourceName(setting, source === 'env' || source === 'config' ? (source as SettingSource) : 'flag');
}

/**
 * `--server` turns remote mode on; `--api-key` alone is a mistake worth
 * saying rather than ignoring. For `email`, a command-line `--server` that is
 * not an http(s) URL is the mail server, and the URL comes from
 * NETINTEL_SERVER or the config file.
 */
function remoteOf(command: Command, env: Readonly<Record<string, string | undefined>>, apiKey: unknown, mayNameMailServer: boolean): GlobalOptions['remote'] {
  const named = mayNameMailServer ? mailServerFlag(command) : null;
  const behindFlag = named === null ? undefined : serverBehindFlag(env);
  const server = named === null ? rootOf(command).getOptionValue('server') : behindFlag?.value;
  const url = typeof server === 'string' && server.trim() !== '' ? server.trim() : null;
  const key = typeof apiKey === 'string' && apiKey.trim() !== '' ? apiKey.trim() : null;
  if (url === null) {
    if (key !== null) throw new NetintelError('usage', '--api-key needs --server URL (or NETINTEL_SERVER): the netintel server to ask');
    return null;
  }
  if (!isHttpUrl(url)) {
    const from = named === null ? settingFrom(command, SETTINGS.server) : behindFlag!.from;
    throw new NetintelError('usage', `${from} must be an http:// or https:// URL (the netintel server of remote mode), not ${JSON.stringify(url)}`, {
      details: { server: url },
    });
  }
  if (key !== null && !HEADER_SAFE.test(key)) {
    const from = settingFrom(command, SETTINGS['api-key']);
    throw new NetintelError('usage', `${from} must be the key as "keys create" printed it (ni_ and letters, digits, - and _): it holds characters an HTTP header cannot carry`);
  }
  return { server: url, apiKey: key, timeoutGiven: rootOf(command).getOptionValueSource('timeout') !== 'default' };
}

/** What an HTTP header value may hold without encoding (RFC 9110 §5.5: visible ASCII; a key has no spaces). */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/** The remote-mode URL when the command line's `--server` means something else: NETINTEL_SERVER, else the config file. */
function serverBehindFlag(env: Environment): { value: unknown; from: string } | undefined {
  return resolveSetting<unknown>(SETTINGS.server, { env, config: readConfigFile(configFilePath(env)) });
}

