import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Outcome } from '../engine/outcome.js';
import type { ErrorCode } from '../errors.js';
import type { UpdateProgress } from '../engine/data/update-data.js';
import type { CliIo } from '../cli/io.js';
import { configFilePath, readConfigFile } from '../cli/config-file.js';
import { emitOutcomes } from '../cli/emit.js';
import type { CommandRuntime } from '../cli/runtime.js';
import type { RunProgress } from '../cli/progress.js';
import { DATA_STATUS_SCHEMA, DATA_UPDATE_SCHEMA } from '../output/schemas/data-schema.js';
import { escapeTerminalText } from '../output/terminal-text.js';

/** How progress names each compile step of an update. */
const COMPILED_INDEX_NAMES = { 'asn-index': 'the ASN index', 'security-index': 'the signal index', 'rpki-index': 'the RPKI index' } as const;

/** A download silent for longer than this (or --timeout, when longer) is abandoned. */
const MIN_IDLE_TIMEOUT_MS = 30_000;

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function days(value: string): number {
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(number > 0)) throw new InvalidArgumentError(`--stale-after takes a positive number of days, not ${JSON.stringify(value)}`);
  return number;
}

export function registerDataCommand(program: Command, runtime: CommandRuntime): void {
  const data = program
    .command('data')
    .description('the datasets: download and install updates (data update), show what is installed and how old (data status)')
    .addHelpText(
      'after',
      [
        '',
        'The data dir is --data-dir, else $XDG_DATA_HOME/netintel (default ~/.local/share/netintel).',
        'Sources and their official URLs: netintel data status. Override a URL with --feed NAME=URL or',
        'the config file: { "feeds": { "tor-exit": "https://...", "azure": { "url": "...", "stale_days": 7 } } }',
      ].join('\n'),
    );

  data
    .command('update')
    .description('download every enabled source (or the named ones), validate, and swap each in atomically')
    .argument('[sources...]', 'source names (netintel data status lists them); default: every enabled source')
    .addOption(new Option('--feed <name=url>', 'download a source from this URL (http, https or file; repeatable)').argParser(collect))
    .addOption(new Option('--force', 'download even when the installed version is current, and accept one that shrank a lot'))
    .addHelpText(
      'after',
      [
        '',
        'Each source updates on its own: one that fails keeps its installed version and the others go on.',
        'Exit status: 0 all updated or current, 7 some failed, the failure\'s code when all failed.',
        'Downloads honour HTTPS_PROXY, HTTP_PROXY and NO_PROXY (or their lower-case forms);',
        'a private CA\'s certificate goes in NODE_EXTRA_CA_CERTS=FILE.',
        'Examples:',
        '  netintel data update',
        '  netintel data update tor-exit open-proxies',
        '  netintel data update azure --feed azure=https://download.microsoft.com/.../ServiceTags_Public_20261116.json',
      ].join('\n'),
    )
    .action(async (names: string[], flags: { feed?: string[]; force?: boolean }, command: Command) => {
      const options = runtime.options(command);
      const { io } = runtime;
      const [{ defaultDataDir }, sourcesModule, { updateData }, { downloadNetwork }, offline, { dataStatus }, { exitCodeForRun }] = await Promise.all([
        import('../engine/data/data-files.js'),
        import('../engine/data/data-sources.js'),
        import('../engine/data/update-data.js'),
        import('../cli/download-network.js'),
        import('../cli/offline-update.js'),
        import('../engine/data/data-status.js'),
        import('../cli/exit-codes.js'),
      ]);
      const sources = sourcesModule.applySourceSettings(sourcesModule.loadSourceRegistry(), readConfigFile(configFilePath(io.env)).feeds, flags.feed ?? []);
      const selected = sourcesModule.selectSources(sources, names);
      const dataDir = options.dataDir ?? defaultDataDir(io.env);
      const network = downloadNetwork(io.env);
      const started = Date.now();
      const outcomes = await updateData({
        dataDir,
        sources,
        selected,
        force: flags.force === true,
        idleTimeoutMs: Math.max(options.timeoutMs, MIN_IDLE_TIMEOUT_MS),
        now: () => new Date(),
        pid: process.pid,
        isProcessAlive,
        userAgent: 'netintel (data update)',
        network,
        onProgress: io.stderr.isTTY === true && !options.quiet ? withSpinner(progressPrinter(io), runtime.progress) : undefined,
      }).finally(() => network.dispatcher.close().catch(() => {}));
      const unreachable = offline.unreachableNetwork(outcomes);
      if (unreachable === null) {
        runtime.exitCode = await emitOutcomes(io, options, DATA_UPDATE_SCHEMA, [outcomes], { single: false, bulk: false });
        if (!options.quiet) io.stderr.write(updateSummary(outcomes, dataDir, Date.now() - started));
        return;
      }
      // No network: one line for every source, not one per source; data formats still get a record each.
      if (options.format === 'table') {
        const failures = new Map<ErrorCode, number>();
        for (const outcome of outcomes) if (!outcome.ok) failures.set(outcome.error.code, (failures.get(outcome.error.code) ?? 0) + 1);
        runtime.exitCode = exitCodeForRun(0, failures);
      } else {
        runtime.exitCode = await emitOutcomes(io, options, DATA_UPDATE_SCHEMA, [outcomes], { single: false, bulk: false, failuresOnStderr: false });
      }
      const asked = new Set(selected.map((source) => source.name));
      const installed = dataStatus({ dataDir, sources, now: new Date() }).filter((row) => asked.has(row.name));
      io.stderr.write(`netintel: ${escapeTerminalText(offline.unreachableNetworkMessage(unreachable, installed))}\n`);
    });

  data
    .command('status')
    .description('every dataset: where it is, its version and date, age, entries, licence, and whether it is stale')
    .argument('[sources...]', 'source names; default: all')
    .addOption(new Option('--feed <name=url>', 'show the source with this URL (as data update would use it; repeatable)').argParser(collect))
    .addOption(new Option('--stale-after <days>', 'call data stale after this many days, for every source (default: per source)').argParser(days))
    .action(async (names: string[], flags: { feed?: string[]; staleAfter?: number }, command: Command) => {
      const options = runtime.options(command);
      const { io } = runtime;
      const [{ defaultDataDir }, sourcesModule, { dataStatus }, { NetintelError }] = await Promise.all([
        import('../engine/data/data-files.js'),
        import('../engine/data/data-sources.js'),
        import('../engine/data/data-status.js'),
        import('../errors.js'),
      ]);
      const sources = sourcesModule.applySourceSettings(sourcesModule.loadSourceRegistry(), readConfigFile(configFilePath(io.env)).feeds, flags.feed ?? []);
      const dataDir = options.dataDir ?? defaultDataDir(io.env);
      let rows = dataStatus({ dataDir, sources, now: new Date(), staleAfterDays: flags.staleAfter ?? null });
      if (names.length > 0) {
        const known = new Set(rows.map((row) => row.name));
        const unknown = names.find((name) => !known.has(name));
        if (unknown !== undefined) throw new NetintelError('usage', `no source named ${JSON.stringify(unknown)}; known: ${[...known].join(', ')}`, { details: { source: unknown } });
        rows = rows.filter((row) => names.includes(row.name));
      }
      const outcomes: Array<Outcome<unknown>> = rows.map((row) => ({ ok: true, query: row.name, value: row }));
      runtime.exitCode = await emitOutcomes(io, options, DATA_STATUS_SCHEMA, [outcomes], { single: names.length === 1, bulk: false });
      if (!options.quiet) {
        for (const row of rows) if (row.stale === true) io.stderr.write(`netintel: warning: ${escapeTerminalText(`${row.name}: ${row.warning}`)}\n`);
      }
    });
}

/** Signal 0 probes a process without touching it; EPERM means it exists under another user. */
function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The printer's lines, and the step in progress as the spinner's text. */
function withSpinner(print: (event: UpdateProgress) => void, progress: RunProgress): (event: UpdateProgress) => void {
  return (event) => {
    print(event);
    if (event.type === 'start') progress.waiting(`${event.source}: downloading...`);
    else if (event.type === 'bytes') progress.waiting(`${event.source}: ${megabytes(event.received)}${event.total === null ? '' : ` of ${megabytes(event.total)}`}...`);
    else if (event.type === 'compile') progress.waiting(`compiling ${COMPILED_INDEX_NAMES[event.what]}...`);
  };
}

function progressPrinter(io: CliIo): (event: UpdateProgress) => void {
  const lastShown = new Map<string, number>();
  // A download is named once its data starts to come: one that never connects says nothing until the end.
  const urls = new Map<string, string>();
  return (event) => {
    switch (event.type) {
      case 'start':
        urls.set(event.source, event.url);
        break;
      case 'bytes': {
        const url = urls.get(event.source);
        if (url !== undefined) {
          urls.delete(event.source);
          io.stderr.write(`netintel: ${event.source}: downloading ${escapeTerminalText(url)}\n`);
        }
        // One line per 8 MiB at most: enough to see a large download move.
        const step = Math.floor(event.received / (8 * 2 ** 20));
        if (step > (lastShown.get(event.source) ?? 0)) {
          lastShown.set(event.source, step);
          const total = event.total === null ? '' : ` of ${megabytes(event.total)}`;
          io.stderr.write(`netintel: ${event.source}: ${megabytes(event.received)}${total}\n`);
        }
        break;
      }
      case 'done':
        // A failure is said once, at the end (emitOutcomes, or one line when the network cannot be reached).
        if (event.status !== 'failed') io.stderr.write(`netintel: ${event.source}: ${escapeTerminalText(event.message)}\n`);
        break;
      case 'compile':
        io.stderr.write(`netintel: compiling ${COMPILED_INDEX_NAMES[event.what]}\n`);
        break;
    }
  };
}

function megabytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

function updateSummary(outcomes: ReadonlyArray<Outcome<{ status: string }>>, dataDir: string, ms: number): string {
  const updated = outcomes.filter((outcome) => outcome.ok && outcome.value.status === 'updated').length;
  const current = outcomes.filter((outcome) => outcome.ok && outcome.value.status === 'not_modified').length;
  const failed = outcomes.filter((outcome) => !outcome.ok).map((outcome) => outcome.query);
  const parts = [`${updated} updated`, `${current} not modified`, `${failed.length} failed${failed.length > 0 ? ` (${failed.join(', ')})` : ''}`];
  return `netintel: data update in ${dataDir}: ${parts.join(', ')} in ${(ms / 1000).toFixed(1)} s\n`;
}
