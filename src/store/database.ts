/**
 * The one database port of the stores (docs/design.md, One database port
 * for the stores): keys, accounts, sessions, usage and the mail outbox are
 * written once against it, and an adapter runs them on SQLite
 * (sqlite-database.ts, one machine) or on PostgreSQL (postgres-database.ts,
 * several servers).
 *
 * Statements use PostgreSQL's positional placeholders `$1 … $n`, which
 * SQLite reads as named parameters of the same names. Times are passed as
 * `Date` and come back as ISO 8601 strings (`2026-11-29T04:46:04.123Z`) from
 * both: SQLite keeps them as that text, which sorts as the time does.
 */
export type SqlValue = string | number | Buffer | Date | null;

export interface Queryable {
  /** The rows of a statement (a SELECT, or a write with RETURNING). */
  all<Row extends object>(sql: string, params?: readonly SqlValue[]): Promise<Row[]>;
  /** The first row of a statement, or undefined. */
  one<Row extends object>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined>;
  /** Runs a write; the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

export interface Database extends Queryable {
  readonly dialect: 'sqlite' | 'postgres';
  /** Where the data is, for logs: the file, or the URL with its password hidden. */
  readonly location: string;
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back
   * when it throws. On SQLite it is a write transaction taken at its start
   * (BEGIN IMMEDIATE), so two at once take turns and never deadlock.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * A value that changes whenever keys or accounts may have changed, by this
   * process or another one; null while there is no way to tell, and then
   * nothing read may be kept in memory. SQLite asks PRAGMA data_version;
   * PostgreSQL follows the changes its triggers announce (postgres-changes.ts),
   * from the first time it is asked.
   */
  changeMark(): string | null;
  /** How long a mark may be trusted before changeMark is asked again, in ms: 0 where asking costs nothing. */
  readonly changeMarkMaxAgeMs: number;
  /** The clause that locks the rows a SELECT picks and skips rows another transaction holds ('' where one writer at a time is the rule). */
  readonly skipLocked: string;
  close(): Promise<void>;
}

/** `$1, $2, …` from `first` on, one per value: an IN list both dialects read. */
export function placeholders(count: number, first = 1): string {
  return Array.from({ length: count }, (_, index) => `$${first + index}`).join(', ');
}
