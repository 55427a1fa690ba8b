import { Option, type Command } from 'commander';
import type { AccountRecord, AccountStore } from '../store/account-store.js';
import { emitOutcomes } from '../cli/emit.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { ACCOUNT_SCHEMA } from '../output/schemas/account-schema.js';
import { KEY_DATABASE_SETTING } from '../store/database-location.js';

interface AccountFlags {
  db?: string;
  plans?: string;
}

interface CreateFlags extends AccountFlags {
  email: string;
  plan?: string;
}

/** `netintel accounts list|show|create|set-plan|disable|delete`: the self-service accounts, in the key database. */
export function registerAccountsCommand(program: Command, runtime: CommandRuntime): void {
  const accounts = program
    .command('accounts')
    .description('accounts of the self-service pages: list, show, create, set-plan, disable, delete')
    .addHelpText(
      'after',
      '\nExamples:\n  netintel accounts list -f json\n  netintel accounts show ada@example.org\n  netintel accounts set-plan ada@example.org pro\n  netintel accounts disable abcdefghijkl',
    );
  const dbOption = () => new Option(`${KEY_DATABASE_SETTING.flag} <path>`, `key database: a SQLite file, or postgres://user:password@host:port/db (env: ${KEY_DATABASE_SETTING.env}; default $XDG_DATA_HOME/netintel/keys.db)`);
  const plansOption = () => new Option('--plans <file>', 'plans file whose plan names are accepted (default: the shipped data/plans.json)');
  const account = '<id-or-email>';
  const accountHelp = 'the account id (as `accounts list` shows), or its e-mail address';

  /** Opens the store, runs `work`, prints what it returns, closes the store. */
  const run = async (flags: AccountFlags, command: Command, work: (store: AccountStore) => Promise<AccountRecord[]>, single: boolean): Promise<void> => {
    const options = runtime.options(command);
    const { openConfiguredStore } = await import('../store/open-store.js');
    const store = await openConfiguredStore(flags.db, runtime.io.env, { connections: 1 });
    try {
      const records = (await work(store.accounts)).map((record) => ({ ok: true as const, query: record.id, value: record }));
      runtime.exitCode = await emitOutcomes(runtime.io, options, ACCOUNT_SCHEMA, [records], { single, bulk: false });
    } finally {
      await store.close();
    }
  };
  const plansOf = async (flags: AccountFlags) => (await import('../keys/plans.js')).loadPlanTable(flags.plans);

  accounts
    .command('list')
    .description('every account: id, e-mail, plan, dates (never the password)')
    .addOption(dbOption())
    .action((flags: AccountFlags, command: Command) => run(flags, command, (store) => store.list(), false));

  accounts
    .command('show')
    .description('one account, by id or e-mail address')
    .argument(account, accountHelp)
    .addOption(dbOption())
    .action((target: string, flags: AccountFlags, command: Command) => run(flags, command, async (store) => [await store.find(target)], true));

  accounts
    .command('create')
    .description('make an account without a password (its holder sets one through a reset link)')
    .requiredOption('--email <address>', 'the e-mail address, stored in one canonical form')
    .addOption(new Option('--plan <plan>', 'free-account, starter, pro or enterprise, or a plan of --plans FILE (default: the plans file\'s newAccounts, free-account)'))
    .addOption(plansOption())
    .addOption(dbOption())
    .action(async (flags: CreateFlags, command: Command) => {
      const { checkKeyedPlan } = await import('../keys/plans.js');
      const plans = await plansOf(flags);
      const plan = flags.plan ?? plans.newAccounts;
      checkKeyedPlan(plans, plan);
      await run(flags, command, async (store) => [await store.create({ email: flags.email, passwordHash: null, plan })], true);
    });

  accounts
    .command('set-plan')
    .description("change an account's plan (a plan of the plans file)")
    .argument(account, accountHelp)
    .argument('<plan>', 'free-account, starter, pro or enterprise (or a plan of --plans FILE)')
    .addOption(plansOption())
    .addOption(dbOption())
    .action(async (target: string, plan: string, flags: AccountFlags, command: Command) => {
      const plans = await plansOf(flags);
      await run(flags, command, async (store) => [await store.setPlan((await store.find(target)).id, plan, plans)], true);
    });

  accounts
    .command('disable')
    .description("disable an account: the server refuses its keys (within a second for a running server)")
    .argument(account, accountHelp)
    .addOption(dbOption())
    .action((target: string, flags: AccountFlags, command: Command) => run(flags, command, async (store) => [await store.disable((await store.find(target)).id)], true));

  accounts
    .command('delete')
    .description('delete an account with its keys and pending links; prints what it was')
    .argument(account, accountHelp)
    .addOption(dbOption())
    .action((target: string, flags: AccountFlags, command: Command) => run(flags, command, async (store) => [await store.delete((await store.find(target)).id)], true));

  for (const sub of accounts.commands) sub.exitOverride().configureOutput(program.configureOutput());
}
