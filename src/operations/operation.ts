import type { Command, Option } from 'commander';
import type { GlobalOptions } from '../cli/global-options.js';
import type { TrustAnchor } from '../engine/dns/dnssec/trust-anchor.js';
import type { FanOutLimits } from '../engine/fan-out.js';
import type { Target } from '../engine/bulk/read-targets.js';
import type { EngineContext } from '../engine/context.js';
import type { Outcome } from '../engine/outcome.js';
import type { NetintelError } from '../errors.js';
import type { PlanFeature, PlanTable } from '../keys/plans.js';
import type { HumanView } from '../output/human/view.js';
import type { RecordSchema } from '../output/record-schema.js';
import type { ApiResponse } from '../remote/api-client.js';
import type { ExpectedAnswer } from '../remote/answer-check.js';
import type { AnswerSubject } from '../remote/answer-subject.js';
import type { ApiRoute } from '../server/api-route.js';
import type { CommandRun } from './command-run.js';
import type { ManyTargets, PreparedRows, TargetSource } from './engine.js';
import type { JsonSchema } from './json-schema.js';

/**
 * An operation is declared once (docs/design.md, Operations): its name, the
 * parser of its settings, the engine call, its record (columns, JSON Schema,
 * human view), its API mapping and its command. The CLI command, the API
 * route, the remote call and the library function are made from this
 * declaration; nothing else lists operations by name.
 *
 * A declaration loads nothing heavy: the engine, the view and the route's
 * work are imported when they run, so that a one-off run of one command
 * pays for that command alone.
 */

export type MaybePromise<T> = T | Promise<T>;

/** The outcomes of one target: usually one; one per address of a host name, one per type of a DNS question. */
export type Outcomes<R> = Array<Outcome<R>>;

/** A run's lookup: called once per target, it never rejects (a failure is an outcome). */
export interface Lookup<R> {
  (target: string): MaybePromise<Outcomes<R>>;
  /** The caller's own address looked up, for an operation that takes it when no target is given. */
  ownAddress?: () => Promise<Outcomes<R>>;
  /** Many targets, when the lookup has a way of its own (the API's bulk form, a bulk run's worker threads); see lookupMany. */
  all?: <T extends Target>(targets: TargetSource<T>, many: ManyTargets) => AsyncIterable<Array<Outcome<R>> | PreparedRows>;
  /** The most targets it wants in flight at once (a remote lookup asks a server fewer); absent: the run's `--concurrency`. */
  concurrency?: number;
  /** Releases what the lookup holds (sockets of a blocklist run). */
  close?: () => Promise<void>;
}

/** What an operation's records are: their columns, their JSON Schema and their human view. */
export interface RecordDeclaration {
  /** The column schema: CSV columns, the table view's columns and `--fields`. */
  columns: RecordSchema;
  /**
   * The JSON Schema of the record: the OpenAPI component `name`, the
   * component of the API's bulk answer of such records (`bulkAnswer`), and
   * the schemas themselves, loaded when the API's document is built (a run
   * of the command prints records without them).
   */
  json?: { name: string; bulkAnswer?: string; load: () => Promise<RecordJsonSchemas> };
  /** The human view (format `table`), loaded when a table is drawn; absent: the columns as a generic view. */
  view?: () => Promise<HumanView>;
}

/** A record's JSON Schema, and the components it refers to that no other record declares (`parts`). */
export interface RecordJsonSchemas {
  schema: JsonSchema;
  parts?: Readonly<Record<string, JsonSchema>>;
}

/**
 * What a remote mapping may ask of a netintel server: src/remote's client,
 * with every protection of remote mode (redirects, body caps, the answer's
 * schema, one deadline).
 */
export interface RemoteCall {
  /** The netintel server asked (for messages). */
  readonly server: string;
  /** Requests in flight at once over many targets. */
  readonly concurrency: number;
  /** A GET; the answer must be `expected` (default: what the published API says `path` answers). */
  get(path: string, params: Record<string, string | undefined>, expected?: ExpectedAnswer): Promise<ApiResponse>;
  /** A POST of `body` as JSON; the answer is checked likewise. */
  post(path: string, body: unknown, expected?: ExpectedAnswer): Promise<ApiResponse>;
  /** A record answer of the published document by component name: `recordAnswer('IpInfoRecord', 'ip record')`. */
  recordAnswer(component: string, name: string): ExpectedAnswer;
  /** A bulk answer of the published document by component name, with the bulk cap. */
  bulkAnswer(component: string, name: string): ExpectedAnswer;
  /** What `method path` answers, renamed for messages. */
  answerOf(method: 'GET' | 'POST', path: string, name: string): ExpectedAnswer;
  /** Every A then AAAA address of a host name, as the server's resolvers give them. @throws NetintelError `not_found` when it has neither */
  hostAddresses(name: string): Promise<string[]>;
  /** The batch sizes of the key's plan (GET /api/quota, asked once). */
  plan(): Promise<PlanSizes>;
  /**
   * A bulk answer's items as outcomes, after checking that they answer the batch sent, in order;
   * with `subject`, each record must also name its query as `answering` checks.
   */
  bulkOutcomes<R>(answer: unknown, batch: readonly string[], name: string, subject?: AnswerSubject): Outcomes<R>;
  /**
   * Checks that `record` answers the question about `asked`: its `ip` is that address (`ip`, when `asked`
   * is an address), or its `domain` names that domain (`domain`). @throws NetintelError `upstream` (`unfit`) naming both
   */
  answering(name: string, record: unknown, asked: string, subject: AnswerSubject): void;
  /** An error item of an answer as the error it stands for. */
  itemError(item: { code: string; message: string; details?: Record<string, unknown> }): NetintelError;
  /** An answer that passed its schema but does not fit the question asked. */
  unfit(name: string, why: string): NetintelError;
  /** Says once which groups the server left out: as its X-Netintel-Withheld header said (the key's plan), or unsaid. */
  withheld(groups: string, said?: boolean): void;
}

/** The batch sizes of a key's plan (GET /api/quota). */
export interface PlanSizes {
  /** Items per request of the bulk forms. */
  batch: number;
  /** Addresses per POST /api/bulk request, or null when the plan has no bulk processing. */
  bulkMax: number | null;
}

/** The API's form for many targets per request (a bulk form), asked in groups of the plan's size. */
export interface ApiBatch<S, R> {
  /** Whether the form applies to a run: its settings, and whether the targets are a list read from stdin or files. */
  applies(settings: S, list: boolean): boolean;
  /**
   * Without the plan's sizes (GET /api/quota failed) the run cannot start:
   * the failure ends it. Otherwise each target fails with it.
   */
  stopsWithoutPlan?: boolean;
  /** The size of the groups the targets are cut into. */
  size(plan: PlanSizes): number;
  /** One group: one outcome per target, in order. */
  send(remote: RemoteCall, targets: readonly Target[], settings: S, plan: PlanSizes): Promise<Outcomes<R>>;
}

/**
 * A route the operation serves, as src/server/api-route.ts declares it;
 * the method, path and plan feature of the first are the mapping's, and the
 * response schema defaults to the record's JSON Schema.
 */
export type RouteDeclaration = Omit<ApiRoute, 'method' | 'url' | 'feature' | 'responseSchema'> & Partial<Pick<ApiRoute, 'method' | 'url' | 'feature' | 'responseSchema'>>;

/**
 * How an operation is asked of the HTTP API (docs/api.md): its path,
 * method and plan feature, the request of one target, and the route when
 * the operation serves the path (several operations may share one path,
 * one of them serving it).
 */
export interface ApiMapping<S, R> {
  method: 'GET' | 'POST';
  path: string;
  feature: PlanFeature | null;
  /** The query parameters of one target (the remote call of a one-request operation); null: the caller's own address. */
  query?(target: string | null, settings: S): Record<string, string | undefined>;
  /** What the answer must be (default: what the published API says the path answers). */
  expected?(remote: RemoteCall): ExpectedAnswer;
  /** The record the answer holds for the target; default: the answer is the record. */
  record?(response: ApiResponse, remote: RemoteCall, target: string | null, settings: S): R;
  /**
   * The field of a record that names the target it answers for: the record of
   * each request of one target is checked to name the target asked
   * (src/remote/answer-subject.ts), so that a server cannot pass one target's
   * record off as another's; null where the settings ask about something
   * else than the target (`email --type smtp --server HOST`). A bulk form's
   * records are checked by `bulkOutcomes`, given the same subject.
   */
  subject?(settings: S): AnswerSubject | null;
  /** A target that is a host name is looked up by each of its addresses, resolved by the server (as locally). */
  hostNames?: boolean;
  /** With no target the path answers for the caller's own address: the outcome's query is then this of the record. */
  caller?(record: R): string;
  /** The remote call of an operation that is not one request per target. */
  call?(remote: RemoteCall, target: string, settings: S): Promise<Outcomes<R>>;
  /** The API's bulk form, where it has one. */
  batch?: ApiBatch<S, R>;
  /** The routes the operation serves (another operation may serve the path, this one asking it). */
  route?: (plans: PlanTable) => RouteDeclaration | readonly RouteDeclaration[];
}

/** The shared declarations of the command line, handed to a command's declaration. */
export interface DeclareKit {
  /** `--fail-on warning|error`. */
  failOnOption(): Option;
  /** The fan-out caps (`--max-mx`, `--max-addresses`, `--max-smtp-connections`). */
  fanOutOptions(which: ReadonlyArray<'max-mx' | 'max-addresses' | 'max-smtp-connections'>): Option[];
  /** `--max-expand <n>` of `ip` and `bulk`. */
  maxExpandOption(): Option;
  /** The parser of an option taking a whole number from `min` to `max`. */
  integerIn(name: string, min: number, max: number): (value: string) => number;
  /** The most worker threads a bulk run starts by default. */
  readonly defaultMaxBulkThreads: number;
}

/** What a command's parser may read besides its flags. */
export interface SettingsKit {
  /** The run's global options. */
  readonly options: GlobalOptions;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `email`: the mail server a command-line `--server` names (not an http(s) URL), or null. */
  mailServerFlag(): string | null;
  /** The caps of the fan-out flags given, the defaults for the rest. */
  fanOut(flags: Record<string, unknown>): FanOutLimits;
  /** @throws NetintelError `usage` naming the first fan-out flag given: a server checks with its own caps. */
  refuseFanOut(flags: Record<string, unknown>, command: string): void;
  /** CA certificates of a PEM file (`--tls-ca`, `--ca`). @throws NetintelError `usage` */
  readCaFile(path: string, flag: '--tls-ca' | '--ca'): string[];
  /**
   * The records of the trust anchor file the global options name
   * (`--trust-anchor`, NETINTEL_TRUST_ANCHOR, the config file), read when a
   * run validates DNSSEC; undefined for the IANA root KSKs, and in remote
   * mode (the server validates from its own).
   * @throws NetintelError `usage`
   */
  trustAnchor(): Promise<TrustAnchor | undefined>;
  /** A file ("-": stdin) read as a stream up to `limit` bytes. */
  readUpTo(file: string, limit: number): Promise<Buffer>;
}

/** How an operation's command is made: its declaration, its settings parser and its run. */
export interface CommandDeclaration<S, R = unknown> {
  /** Declares the description, arguments, options and help text on the command the CLI made under the operation's name. */
  declare(command: Command, kit: DeclareKit): void;
  /** `email`: a command-line `--server` that is not an http(s) URL names the mail server to test. */
  serverNamesMailServer?: boolean;
  /**
   * Refuses, in remote mode, the flags a server cannot be sent (credentials,
   * files, caps the server decides), before anything is asked or read.
   *
   * @throws NetintelError `usage` naming the first such flag.
   */
  refuseRemote?(flags: Record<string, unknown>, kit: SettingsKit): void | Promise<void>;
  /**
   * The settings of a run, from the command's flags (commander's values),
   * read after the global options.
   *
   * @throws NetintelError `usage` (or `invalid_input`) for flags that do not go together.
   */
  settings(flags: Record<string, unknown>, kit: SettingsKit): MaybePromise<S>;
  /** The run: looks the targets up through `run.lookup`, prints them, and gives the exit code. */
  run(run: CommandRun<S, R>): Promise<number>;
}

/**
 * One operation. `S` is the typed input of a run (its settings; the targets
 * come with each call), `R` its record.
 */
export interface Operation<S = any, R = any> {
  readonly name: string;
  readonly command: CommandDeclaration<S, R>;
  /** The engine call: the lookup of a run, from its settings, over the engine context. */
  lookup(ctx: EngineContext, settings: S): MaybePromise<Lookup<R>>;
  readonly record: RecordDeclaration;
  /** How the API asks it: present, the operation runs remotely too. */
  readonly api?: ApiMapping<S, R>;
  /** The settings of a run that gives none (the library's lookup); absent: the library cannot run it without them. */
  readonly defaults?: S;
}

/** An operation the HTTP API can ask: the only kind a remote engine takes. */
export type RemoteOperation<S = any, R = any> = Operation<S, R> & { readonly api: ApiMapping<S, R> };

/** True for an operation the HTTP API can ask (the compiler then lets a remote engine take it). */
export function isRemoteOperation<S, R>(operation: Operation<S, R>): operation is RemoteOperation<S, R> {
  return operation.api !== undefined;
}

/**
 * Declares an operation of settings `S` and records `R`: `defineOperation<S, R>()({ ... })`,
 * the identity, keeping the literal name (the library's lookups are typed by it) and whether
 * the API can ask it (a `RemoteOperation`, which a remote engine takes).
 */
export function defineOperation<S, R>() {
  function declare<N extends string>(operation: RemoteOperation<S, R> & { readonly name: N }): RemoteOperation<S, R> & { readonly name: N };
  function declare<N extends string>(operation: Operation<S, R> & { readonly name: N }): Operation<S, R> & { readonly name: N };
  function declare(operation: Operation<S, R>): Operation<S, R> {
    return operation;
  }
  return declare;
}
