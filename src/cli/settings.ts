import { defaultDataDir } from '../engine/data/data-files.js';
import type { OutputFormat } from '../output/formatter.js';
import { parseFieldList } from '../output/record-schema.js';

/**
 * The global options, their defaults and where each may come from, without
 * commander: global-options.ts declares them to commander and turns the
 * values it parsed into GlobalOptions here.
 */

/** The options every command shares, resolved flag > env > config file > default. */
export interface GlobalOptions {
  format: OutputFormat;
  fields: string[] | null;
  header: boolean;
  dataDir: string | null;
  timeoutMs: number;
  concurrency: number;
  /** DNS resolvers as given (`ip[:port]`), or null for the system's. */
  resolvers: string[] | null;
  dnsTcp: boolean;
  dnsRetries: number;
  quiet: boolean;
  verbose: boolean;
  color: boolean;
  /** Remote mode: the netintel server to ask (`--server`) and the API key (`--api-key`), or null for local lookups. */
  remote: { server: string; apiKey: string | null } | null;
}

/** Defaults of the options that have one, by option name (commander's camel case). */
export const OPTION_DEFAULTS = {
  format: 'table',
  header: true,
  timeout: 5000,
  concurrency: 64,
  retries: 2,
} as const;

export interface Setting {
  /** The option's name (commander's camel case). */
  option: string;
  /** The NETINTEL_* variable that may give it. */
  env?: string;
  kind: 'text' | 'boolean' | 'format' | 'integer' | 'count' | 'list';
  max?: number;
}

/** The settings a config file or a NETINTEL_* variable may give, by config key (the long flag's name). */
export const SETTINGS = {
  format: { option: 'format', env: 'NETINTEL_FORMAT', kind: 'format' },
  fields: { option: 'fields', env: 'NETINTEL_FIELDS', kind: 'text' },
  header: { option: 'header', kind: 'boolean' },
  'data-dir': { option: 'dataDir', env: 'NETINTEL_DATA_DIR', kind: 'text' },
  timeout: { option: 'timeout', env: 'NETINTEL_TIMEOUT', kind: 'integer', max: 600_000 },
  concurrency: { option: 'concurrency', env: 'NETINTEL_CONCURRENCY', kind: 'integer', max: 10_000 },
  resolver: { option: 'resolver', env: 'NETINTEL_RESOLVER', kind: 'list' },
  tcp: { option: 'tcp', env: 'NETINTEL_TCP', kind: 'boolean' },
  retries: { option: 'retries', env: 'NETINTEL_RETRIES', kind: 'count', max: 10 },
  server: { option: 'server', env: 'NETINTEL_SERVER', kind: 'text' },
  'api-key': { option: 'apiKey', env: 'NETINTEL_API_KEY', kind: 'text' },
  quiet: { option: 'quiet', env: 'NETINTEL_QUIET', kind: 'boolean' },
  verbose: { option: 'verbose', env: 'NETINTEL_VERBOSE', kind: 'boolean' },
} as const satisfies Record<string, Setting>;

/** Every setting with its config key. */
export const SETTING_ENTRIES: ReadonlyArray<readonly [string, Setting]> = Object.entries(SETTINGS);

/** The setting a config key names, if any. */
export function settingFor(key: string): Setting | undefined {
  return Object.hasOwn(SETTINGS, key) ? (SETTINGS as Record<string, Setting>)[key] : undefined;
}

/** A boolean NETINTEL_* variable: off when it is `0` or `false`, on otherwise (an empty one counts as unset). */
export function environmentFlag(value: string): boolean {
  return !/^(0|false)$/i.test(value);
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
    dnsTcp: raw.tcp === true,
    dnsRetries: raw.retries as number,
    quiet: raw.quiet === true,
    verbose: raw.verbose === true,
    color: stdoutIsTty && !env.NO_COLOR && env.TERM !== 'dumb',
    remote,
  };
}

/** Splits a comma-separated list, dropping empty items. */
export function splitList(value: string): string[] {
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
