import { fstatSync, statSync } from 'node:fs';
import { defaultDataDir } from '../engine/data/data-files.js';
import type { Stage } from '../engine/stage.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import type { GlobalOptions } from './global-options.js';
import { feedsHint, showsVerdict, takeDailyHint } from './feeds-hint.js';
import type { CliIo, OutputStream } from './io.js';

/**
 * What a run shows on a terminal's stderr while it waits: a spinner naming
 * the network stage in progress (`probing mx1.example.com:25 (STARTTLS)...`)
 * and, for a list, the rows done, their rate and the time left. Nothing
 * shows when stderr is not a terminal, under -q, or when the run is done
 * within SPINNER_DELAY_MS; stdout is never written. Lines the run writes
 * to stderr (errors, warnings, the bulk summary) find the spinner erased and
 * it is drawn again below them (wrapIo; ora also hooks the process's stdio
 * writes); the run's end erases it. Data written to a pipe finds the spinner
 * erased too, and it comes back only after SPINNER_DELAY_MS: the reader of
 * the pipe (`| jq`) may print on the same terminal at any time after.
 */
export interface RunProgress {
  /** The engine's stage listener (EngineContext.onStage). */
  readonly onStage: (stage: Stage) => void;
  /** A wait of the CLI itself (a call to a netintel server, a dataset download). */
  waiting(text: string): void;
  /**
   * The chunks of a list input, counted on the way (bytes and lines, for
   * the ETA); `size` gives its total bytes when known (asked only when
   * progress shows).
   */
  input<Chunk extends string | Uint8Array>(chunks: AsyncIterable<Chunk>, size: () => number | null): AsyncIterable<Chunk>;
  /**
   * Batches on their way: with `list`, each array or rendered batch counts
   * as rows done (output batches, or the targets of a run whose output
   * batches are lazy); the records of array batches are looked at for
   * security signals their verdict could not consult.
   */
  track<Batch>(batches: AsyncIterable<Batch>, list: boolean): AsyncIterable<Batch>;
  /** Looks at outcomes' records for security signals their verdict could not consult (the hint at the end). */
  noteCoverage(outcomes: Iterable<unknown>): void;
  /** A lookup whose outcomes noteCoverage looks at (rows rendered without passing through `track` as arrays). */
  watchLookup<Target, Result>(lookup: (target: Target) => Result): (target: Target) => Result;
  /**
   * The run's process surface with stderr passing through the progress
   * display: a line written there finds the spinner erased, and the
   * spinner is drawn again below it. Data written to a pipe on stdout
   * finds it erased too.
   */
  wrapIo(io: CliIo): CliIo;
  /**
   * Erases the spinner; then, when the run `completed` (it did not end on
   * an error such as a usage error) and showed a verdict that Tor or proxy
   * feeds were missing from, says so, at most once a day (feeds-hint.ts).
   */
  stop(completed?: boolean): void;
}

/** A wait shorter than this shows nothing. */
export const SPINNER_DELAY_MS = 300;
/** The spinner and the progress line are drawn at most this often. */
const REDRAW_MS = 100;
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const HIGH_RISK_SIGNALS = ['tor_exit_list', 'proxy_list'] as const;

/** Progress of a run on `io`: active only when stderr is a terminal and -q was not given. */
export function createRunProgress(io: CliIo, options: Pick<GlobalOptions, 'quiet' | 'remote' | 'fields' | 'dataDir'>): RunProgress {
  // The spinner draws with cursor controls on the terminal itself: the run's
  // stderr stream writes control characters visibly (run-guard.ts), and its
  // lines pass through wrapIo, which erases the spinner before them.
  if (options.quiet || !stderrMayBeTerminal() || io.stderr.isTTY !== true || process.stderr.isTTY !== true) return SILENT;
  // A terminal that reports no width (some pseudo-terminals) cannot have a line redrawn in place.
  if (!(process.stderr.columns > 0)) return SILENT;
  const color = !io.env.NO_COLOR && io.env.TERM !== 'dumb';
  // Local lookups whose verdict shows: a missing feed is one `netintel data update` installs here.
  const hintDir = options.remote === null && showsVerdict(options.fields) ? (options.dataDir ?? defaultDataDir(io.env)) : null;
  return new TerminalProgress(process.stderr, io.stderr, color, hintDir);
}

/** The progress of a run that shows none. */
export const SILENT: RunProgress = Object.freeze({
  onStage: () => {},
  waiting: () => {},
  input: <Chunk>(chunks: AsyncIterable<Chunk>) => chunks,
  track: <Batch>(batches: AsyncIterable<Batch>) => batches,
  noteCoverage: () => {},
  watchLookup: <Target, Result>(lookup: (target: Target) => Result) => lookup,
  wrapIo: (io: CliIo) => io,
  stop: () => {},
});

/** The words of a stage; names from the network are escaped (they may carry terminal controls). */
export function describeStage(stage: Stage): string {
  const target = escapeTerminalText(stage.target);
  const detail = stage.detail === null ? null : escapeTerminalText(stage.detail);
  switch (stage.kind) {
    case 'dns':
      return `resolving ${target}${detail ? ` ${detail}` : ''}...`;
    case 'smtp':
      return `probing ${target}${detail ? ` (${detail})` : ''}...`;
    case 'mta-sts':
      return `fetching MTA-STS policy from ${target}...`;
    case 'https':
      return `fetching ${detail ?? 'a document'} from ${target}...`;
    case 'blacklist':
      return `checking ${detail ?? 'the'} blocklist${detail === '1' ? '' : 's'} for ${target}...`;
    case 'tls':
      return `TLS ${detail ?? 'handshake'} with ${target}...`;
  }
}

/** The progress line of a list run: rows done, rate, and with `fraction` (of the input read) the share done and the time left. */
export function describeRows(rows: number, elapsedMs: number, fraction: number | null): string {
  const seconds = elapsedMs / 1000;
  const rate = seconds > 0 ? rows / seconds : 0;
  let text = `${rows.toLocaleString('en-US')} row${rows === 1 ? '' : 's'}, ${rate >= 10 ? Math.round(rate).toLocaleString('en-US') : rate.toFixed(1)}/s`;
  if (fraction !== null && fraction > 0 && rows > 0) {
    const share = Math.min(fraction, 1);
    const remaining = (seconds / share) * (1 - share);
    text += `, ${Math.floor(share * 100)}%, ETA ${formatDuration(remaining)}`;
  }
  return text;
}

function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  if (whole < 60) return `${whole}s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes}m${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** What ora's spinner offers that this file uses. */
interface Spinner {
  text: string;
  start(): unknown;
  stop(): unknown;
  clear(): unknown;
  render(): unknown;
}

class TerminalProgress implements RunProgress {
  private stage: string | null = null;
  private list: { startedAt: number; rows: number; bytes: number; lines: number; size: number | null } | null = null;
  private spinner: Spinner | null = null;
  private delay: NodeJS.Timeout | null = null;
  private redraw: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The kind of the stage shown (a probe's reverse lookup does not replace its SMTP stage). */
  private stageKind: Stage['kind'] | null = null;
  private readonly missing = new Set<string>();

  constructor(
    private readonly terminal: NodeJS.WriteStream,
    /** The run's stderr, for the hint. */
    private readonly stderr: OutputStream,
    private readonly color: boolean,
    /** The data dir of a run whose missing feeds are worth a hint (its stamp is there); null: no hint. */
    private readonly hintDir: string | null,
  ) {}

  readonly onStage = (stage: Stage): void => {
    // A probe's reverse lookup runs beside its conversation: the SMTP stage is what the run waits on.
    if (stage.kind === 'dns' && stage.detail === 'PTR' && this.stageKind === 'smtp') return;
    this.stageKind = stage.kind;
    this.stage = describeStage(stage);
    this.arm();
  };

  waiting(text: string): void {
    this.stageKind = null;
    this.stage = escapeTerminalText(text);
    this.arm();
  }

  async *input<Chunk extends string | Uint8Array>(chunks: AsyncIterable<Chunk>, size: () => number | null): AsyncIterable<Chunk> {
    const list = this.startList(size());
    for await (const chunk of chunks) {
      if (typeof chunk === 'string') {
        list.bytes += Buffer.byteLength(chunk);
        for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', at + 1)) list.lines++;
      } else {
        list.bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) list.lines++;
      }
      yield chunk;
    }
  }

  async *track<Batch>(batches: AsyncIterable<Batch>, list: boolean): AsyncIterable<Batch> {
    const counted = list ? this.startList(this.list?.size ?? null) : null;
    for await (const batch of batches) {
      if (counted !== null) counted.rows += rowCount(batch);
      if (Array.isArray(batch)) this.noteCoverage(batch);
      yield batch;
    }
  }

  noteCoverage(outcomes: Iterable<unknown>): void {
    if (this.hintDir === null || this.missing.size === HIGH_RISK_SIGNALS.length) return;
    for (const outcome of outcomes) {
      const missing = missingSignals(outcome);
      if (missing === null) continue;
      for (const signal of HIGH_RISK_SIGNALS) if (missing.includes(signal)) this.missing.add(signal);
    }
  }

  wrapIo(io: CliIo): CliIo {
    const stderr = this.pausing(io.stderr);
    const progress = this;
    let stdout: OutputStream | null = null;
    // Getters: the process surface opens stdin and stdout on first use only.
    return {
      get stdin() {
        return io.stdin;
      },
      get stdinPiped() {
        return io.stdinPiped;
      },
      get stdout() {
        return (stdout ??= stdoutIsPipe() ? progress.yieldingTo(io.stdout) : io.stdout);
      },
      stderr,
      get env() {
        return io.env;
      },
    };
  }

  /** `stream` with each write made on an erased spinner line, the spinner drawn again after it. */
  private pausing(stream: OutputStream): OutputStream {
    const write = (chunk: string | Uint8Array): boolean => {
      const spinner = this.spinner;
      spinner?.clear();
      try {
        return stream.write(chunk);
      } finally {
        if (spinner !== null && this.spinner === spinner) spinner.render();
      }
    };
    // Everything but write is the stream's own, whatever the stream offers.
    return new Proxy(stream, {
      get: (target, key) => {
        if (key === 'write') return write;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** `stream` with each write made on an erased spinner line, the spinner shown again only after a pause in the writes. */
  private yieldingTo(stream: OutputStream): OutputStream {
    const write = (chunk: string | Uint8Array): boolean => {
      this.pause();
      return stream.write(chunk);
    };
    return new Proxy(stream, {
      get: (target, key) => {
        if (key === 'write') return write;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** Erases the spinner (or puts off its showing) until the run has waited SPINNER_DELAY_MS again. */
  private pause(): void {
    if (this.stopped || (this.spinner === null && this.delay === null)) return;
    this.hide();
    this.arm();
  }

  watchLookup<Target, Result>(lookup: (target: Target) => Result): (target: Target) => Result {
    return (target) => {
      const outcome = lookup(target);
      this.noteCoverage([outcome]);
      return outcome;
    };
  }

  stop(completed = true): void {
    if (this.stopped) return;
    this.stopped = true;
    this.halt();
    if (completed && this.missing.size > 0 && this.hintDir !== null && takeDailyHint(this.hintDir)) {
      this.stderr.write(`netintel: ${feedsHint(this.missing)}\n`);
    }
  }

  private startList(size: number | null): { startedAt: number; rows: number; bytes: number; lines: number; size: number | null } {
    this.list ??= { startedAt: performance.now(), rows: 0, bytes: 0, lines: 0, size };
    // The output side may start counting before the input side knows the size.
    this.list.size ??= size;
    this.arm();
    return this.list;
  }

  /** Starts the spinner once the run has waited SPINNER_DELAY_MS. */
  private arm(): void {
    if (this.stopped || this.delay !== null || this.spinner !== null) return;
    this.delay = setTimeout(() => {
      this.delay = null;
      void this.show();
    }, SPINNER_DELAY_MS);
    this.delay.unref();
  }

  private async show(): Promise<void> {
    const { default: ora } = await import('ora');
    // Stopped, or paused again (a new delay runs) while ora loaded.
    if (this.stopped || this.spinner !== null || this.delay !== null) return;
    const frames = this.color ? FRAMES.map((frame) => `\u001b[36m${frame}\u001b[39m`) : FRAMES;
    this.spinner = ora({
      stream: this.terminal,
      text: this.text(),
      spinner: { interval: REDRAW_MS, frames },
      color: false,
      isEnabled: true,
      // The list a run reads may come from stdin: it is not ora's to swallow.
      discardStdin: false,
      hideCursor: true,
    }) as Spinner;
    process.prependListener('uncaughtException', this.halt);
    process.prependListener('unhandledRejection', this.halt);
    process.prependListener('SIGINT', this.interrupted);
    this.spinner.start();
    this.redraw = setInterval(() => {
      if (this.spinner) this.spinner.text = this.text();
    }, REDRAW_MS);
    this.redraw.unref();
  }

  private text(): string {
    if (this.list === null) return this.stage ?? 'working...';
    const { startedAt, rows, bytes, lines, size } = this.list;
    // Rows done against the lines the input will hold (lines read, scaled by the bytes still unread).
    const fraction = size !== null && size > 0 && bytes > 0 && lines > 0 ? rows / (lines * (size / bytes)) : null;
    const progress = describeRows(rows, performance.now() - startedAt, fraction);
    return this.stage === null ? progress : `${progress} · ${this.stage}`;
  }

  /** Erases the spinner and shows the cursor again; also run before a crash report is written. */
  private readonly halt = (): void => {
    this.stopped = true;
    this.hide();
  };

  /**
   * Ctrl-C: the cursor comes back first. ora's own restore (signal-exit)
   * stops listening before it writes, so a second SIGINT right behind the
   * first (a double Ctrl-C, or a wrapper that passes the signal on) ended
   * the process with the cursor hidden. This listener leaves as it runs,
   * and the process still ends by the signal: through signal-exit's
   * listener, or here when there is none.
   */
  private readonly interrupted = (): void => {
    this.halt();
    if (process.listenerCount('SIGINT') === 0) process.kill(process.pid, 'SIGINT');
  };

  /** Erases the spinner, shows the cursor and cancels a spinner about to show. */
  private hide(): void {
    if (this.delay !== null) clearTimeout(this.delay);
    if (this.redraw !== null) clearInterval(this.redraw);
    this.delay = null;
    this.redraw = null;
    process.removeListener('uncaughtException', this.halt);
    process.removeListener('unhandledRejection', this.halt);
    process.removeListener('SIGINT', this.interrupted);
    this.spinner?.stop();
    this.spinner = null;
  }
}

/** The rows of an output batch: an array's length, rendered rows' counts, or the items of another iterable. */
function rowCount(batch: unknown): number {
  if (Array.isArray(batch)) return batch.length;
  if (batch !== null && typeof batch === 'object') {
    const rendered = batch as { succeeded?: unknown; failures?: unknown };
    if (typeof rendered.succeeded === 'number' && Array.isArray(rendered.failures)) {
      return rendered.succeeded + (rendered.failures as Array<readonly [unknown, number]>).reduce((sum, [, count]) => sum + count, 0);
    }
  }
  return 0;
}

/** `coverage.missing` of an outcome's VPN record, or of its IP record's security verdict; null when it has none. */
function missingSignals(outcome: unknown): readonly string[] | null {
  if (outcome === null || typeof outcome !== 'object' || (outcome as { ok?: unknown }).ok !== true) return null;
  const record = (outcome as { value?: unknown }).value;
  if (record === null || typeof record !== 'object') return null;
  const holder = (record as { security?: unknown }).security ?? record;
  const coverage = (holder as { coverage?: { missing?: unknown } }).coverage;
  return Array.isArray(coverage?.missing) ? (coverage.missing as string[]) : null;
}

/**
 * False when fd 2 is a pipe, a file or a socket, which no terminal is: told
 * by fstat, without making process.stderr, which for a pipe loads node:net
 * and the stream modules (a sixth of a one-off lookup's own start-up; cron
 * gives stderr a pipe) for a run that may never write to it. A character
 * device (a terminal, /dev/null) is left to the stream to tell.
 */
function stderrMayBeTerminal(): boolean {
  try {
    return fstatSync(2).isCharacterDevice();
  } catch {
    return false;
  }
}

/** Whether the process's stdout is a pipe or a socket: its reader may write on the terminal the spinner is drawn on. */
function stdoutIsPipe(): boolean {
  try {
    const stat = fstatSync(1);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/** The size of a regular file, by descriptor (0: stdin) or path; null for anything else (a pipe, a terminal) or when it cannot be read. */
export function regularFileSize(file: number | string): number | null {
  try {
    const stat = typeof file === 'number' ? fstatSync(file) : statSync(file);
    return stat.isFile() ? stat.size : null;
  } catch {
    return null;
  }
}
