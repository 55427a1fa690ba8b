/** The variables a run reads (the CLI's own environment, not necessarily process.env). */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Where an option's value may come from besides the command line, declared
 * with the option: its variable and, for the options a config file may set,
 * the config file's key. The order is always flag > environment > config
 * file > default.
 */
export interface SettingSources {
  /** The long flag, as messages name it: `--redis-url`. */
  readonly flag: string;
  /** The environment variable that may give the value. */
  readonly env?: string;
  /** The config file's key that may give the value (the long flag's name). */
  readonly config?: string;
}

export type SettingSource = 'flag' | 'env' | 'config';

/** A setting's value and where it came from. */
export interface SettingValue<T> {
  readonly value: T;
  readonly source: SettingSource;
  /** The source as messages name it: `--redis-url`, `NETINTEL_REDIS_URL`, `the config file's "redis-url"`. */
  readonly from: string;
}

/** What a setting's sources hold: the flag's value as commander parsed it, the environment, the config file's values. */
export interface SettingInputs<T> {
  readonly flag?: T | undefined;
  readonly env?: Environment;
  readonly config?: Readonly<Record<string, unknown>>;
}

/** Turns a variable's text or a config file's value into the setting's value; throws with a message naming `from`. */
export type SettingParser<T> = (value: unknown, from: string, source: 'env' | 'config') => T;

/** A source of a setting as messages name it. */
export function sourceName(setting: SettingSources, source: SettingSource): string {
  if (source === 'env') return setting.env ?? setting.flag;
  if (source === 'config') return `the config file's "${setting.config ?? setting.flag.replace(/^--/, '')}"`;
  return setting.flag;
}

/** The text of a variable, or undefined: an empty variable counts as unset. */
export function environmentText(env: Environment, variable: string | undefined): string | undefined {
  const text = variable === undefined ? undefined : env[variable];
  return text === undefined || text === '' ? undefined : text;
}

/** A switch's variable: off when it is `0` or `false` (any case), on otherwise. */
export function environmentSwitch(text: string): boolean {
  return !/^(0|false)$/i.test(text);
}

/**
 * A setting's value, flag > environment > config file, or undefined when
 * none gives one. The flag's value is taken as given (commander checked it);
 * a variable's text (an empty one counts as unset) and a config value go
 * through `parse`.
 */
export function resolveSetting<T>(setting: SettingSources, inputs: SettingInputs<T>, parse: SettingParser<T> = (value) => value as T): SettingValue<T> | undefined {
  if (inputs.flag !== undefined) return { value: inputs.flag, source: 'flag', from: setting.flag };
  const text = inputs.env === undefined ? undefined : environmentText(inputs.env, setting.env);
  if (text !== undefined) return { value: parse(text, setting.env!, 'env'), source: 'env', from: setting.env! };
  if (setting.config !== undefined && inputs.config !== undefined && Object.hasOwn(inputs.config, setting.config)) {
    const from = sourceName(setting, 'config');
    return { value: parse(inputs.config[setting.config], from, 'config'), source: 'config', from };
  }
  return undefined;
}
