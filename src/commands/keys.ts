import { InvalidArgumentError, Option, type Command } from 'commander';
import { emitOutcomes } from '../cli/emit.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { NetintelError } from '../errors.js';
import type { PlanLimits } from '../keys/plans.js';
import { API_KEY_SCHEMA } from '../output/schemas/api-key-schema.js';
import { KEY_DATABASE_SETTING } from '../store/database-location.js';

interface KeyFlags {
  db?: string;
  plans?: string;
}

interface CreateFlags extends KeyFlags {
  plan?: string;
  label?: string;
  daily?: number;
  perMinute?: number;
  burst?: number;
  batch?: number;
}

function positive(name: string, integer: boolean) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isFinite(number) || number <= 0 || (integer && !Number.isSafeInteger(number))) {
      throw new InvalidArgumentError(`${name} must be a positive ${integer ? 'integer' : 'number'}, not ${JSON.stringify(value)}`);
    }
    return number;
  };
}

/** `netintel keys create|list|revoke`: the API keys of `netintel serve`, in its key database. */
export function registerKeysCommand(program: Command, runtime: CommandRuntime): void {
  const keys = program
    .command('keys')
    .description('API keys of `netintel serve`: create (shown once), list, revoke')
    .addHelpText('after', '\nExamples:\n  netintel keys create --label laptop\n  netintel keys create --plan pro --label "billing team"\n  netintel keys list -f json\n  netintel keys revoke abcdefghijkl');
  const dbOption = () => new Option(`${KEY_DATABASE_SETTING.flag} <path>`, `key database: a SQLite file, or postgres://user:password@host:port/db (env: ${KEY_DATABASE_SETTING.env}; default $XDG_DATA_HOME/netintel/keys.db)`);

  keys
    .command('create')
    .description('make a key and print it; only its hash is stored, so it cannot be shown again')
    .option('--plan <plan>', 'free-account, starter, pro or enterprise (or a plan of --plans FILE; not free, the plan of requests without a key); default: the plans file\'s newAccounts, free-account')
    .option('--label <text>', 'who or what the key is for')
    .addOption(dbOption())
    .option('--plans <file>', 'plans file whose plan names are accepted (default: the shipped data/plans.json)')
    .addOption(new Option('--daily <n>', 'enterprise: lookups per UTC day').argParser(positive('--daily', true)))
    .addOption(new Option('--per-minute <n>', 'enterprise: burst refill per minute').argParser(positive('--per-minute', false)))
    .addOption(new Option('--burst <n>', 'enterprise: burst capacity').argParser(positive('--burst', true)))
    .addOption(new Option('--batch <n>', 'enterprise: items per bulk-form request').argParser(positive('--batch', true)))
    .action(async (flags: CreateFlags, command: Command) => {
      const options = runtime.options(command);
      const { loadPlanTable, effectivePlan, checkKeyedPlan } = await import('../keys/plans.js');
      const table = loadPlanTable(flags.plans);
      const plan = flags.plan ?? table.newAccounts;
      const limits: Partial<PlanLimits> = {};
      for (const name of ['daily', 'perMinute', 'burst', 'batch'] as const) if (flags[name] !== undefined) limits[name] = flags[name];
      if (Object.keys(limits).length > 0 && plan !== 'enterprise') {
        throw new NetintelError('usage', '--daily, --per-minute, --burst and --batch set an enterprise key\'s own limits: use them with --plan enterprise');
      }
      checkKeyedPlan(table, plan);
      effectivePlan(table, plan, limits);
      const store = await openStore(runtime, flags);
      try {
        const { record, key } = await store.keys.create({ plan, label: flags.label ?? null, limits });
        const { kind, id, ...rest } = record;
        if (!options.quiet) runtime.io.stderr.write('netintel: this is the only time the key is shown; the database keeps only its hash\n');
        runtime.exitCode = await emitOutcomes(runtime.io, options, API_KEY_SCHEMA, [[{ ok: true, query: id, value: { kind, id, key, ...printedKey(rest) } }]], {
          single: true,
          bulk: false,
        });
      } finally {
        await store.close();
      }
    });

  keys
    .command('list')
    .description('every key: id, plan, label, dates (never the key)')
    .addOption(dbOption())
    .action(async (flags: KeyFlags, command: Command) => {
      const options = runtime.options(command);
      const store = await openStore(runtime, flags);
      try {
        const records = (await store.keys.list()).map((record) => ({ ok: true as const, query: record.id, value: printedKey(record) }));
        runtime.exitCode = await emitOutcomes(runtime.io, options, API_KEY_SCHEMA, [records], { single: false, bulk: false });
      } finally {
        await store.close();
      }
    });

  keys
    .command('revoke')
    .description('revoke a key by id: the server refuses it (within a second for a running server)')
    .argument('<id>', 'the key id (the part after ni_ in the key, as `keys list` shows)')
    .addOption(dbOption())
    .action(async (id: string, flags: KeyFlags, command: Command) => {
      const options = runtime.options(command);
      const store = await openStore(runtime, flags);
      try {
        const record = await store.keys.revoke(id.replace(/^ni_([a-z2-7]{12})(?:_.*)?$/, '$1'));
        runtime.exitCode = await emitOutcomes(runtime.io, options, API_KEY_SCHEMA, [[{ ok: true, query: record.id, value: printedKey(record) }]], {
          single: true,
          bulk: false,
        });
      } finally {
        await store.close();
      }
    });

  for (const sub of keys.commands) sub.exitOverride().configureOutput(program.configureOutput());
}

async function openStore(runtime: CommandRuntime, flags: KeyFlags) {
  const { openConfiguredStore } = await import('../store/open-store.js');
  return openConfiguredStore(flags.db, runtime.io.env, { connections: 1 });
}

/**
 * A key as the api-key record prints it: the store keeps an enterprise key's
 * limits under the plans file's names, the record's keys are snake_case as
 * every record's (docs/api.md, Record keys).
 */
function printedKey<Key extends { limits: Partial<PlanLimits> | null }>(key: Key): Omit<Key, 'limits'> & { limits: Record<string, number> | null } {
  if (key.limits === null) return { ...key, limits: null };
  const { perMinute, ...rest } = key.limits;
  return { ...key, limits: { ...rest, ...(perMinute === undefined ? {} : { per_minute: perMinute }) } };
}
