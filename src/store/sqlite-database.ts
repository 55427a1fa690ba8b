import { closeSync, existsSync, mkdirSync, openSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { NetintelError } from '../errors.js';
import type { Database, Queryable, SqlValue } from './database.js';
import { MIGRATIONS, type Migration } from './migrations.js';
import { fileErrorReason } from '../file-error.js';

interface Connection {
  db: BetterSqlite3.Database;
  path: string;
  /** Handles given out: the connection closes with the last. */
  handles: number;
  statements: Map<string, BetterSqlite3.Statement>;
  /** Writes made through this connection (PRAGMA data_version counts only other connections' commits). */
  writes: number;
  /** Settles when the open transaction ends; null when none is open. */
  transaction: Promise<void> | null;
  dataVersion: BetterSqlite3.Statement;
}

/**
 * The one connection of this process to each database file, shared by every
 * store that opens the file. SQLite's locks are POSIX advisory locks, which
 * belong to the process: closing any descriptor of the file, even one that
 * never locked, drops all of them, and another process may then checkpoint
 * and delete the WAL under a live connection ("How To Corrupt An SQLite
 * Database File" §2.2). So the file is opened outside SQLite only to create
 * it, before this process has a connection to it, and never twice.
 */
const connections = new Map<string, Connection>();

/** Statements kept prepared per connection; the stores use a few dozen. */
const MAX_STATEMENTS = 256;

/**
 * Opens the SQLite database file (WAL, so servers and the CLI use it at once),
 * applying the migrations it lacks. A file it creates is readable by its
 * owner only (0600, in a 0700 directory if it makes one); SQLite gives the
 * -wal and -shm files the database file's mode. An existing file keeps its mode.
 *
 * @throws NetintelError `usage` when the file cannot be opened or migrated.
 */
export async function openSqliteDatabase(path: string, migrations: readonly Migration[] = MIGRATIONS): Promise<Database> {
  const connection = connect(path);
  connection.handles++;
  const database = handle(connection);
  try {
    await migrateSqlite(database, connection, migrations);
  } catch (error) {
    await database.close();
    if (error instanceof NetintelError) throw error;
    throw new NetintelError('usage', `cannot open the key database ${path}: ${fileErrorReason(error)}`, { cause: error, details: { path } });
  }
  return database;
}

function connect(path: string): Connection {
  const memory = path === ':memory:' || path.startsWith('file:');
  const known = memory ? undefined : connections.get(fileKey(path));
  if (known) return known;
  try {
    if (!memory) createFile(path);
    const db = new BetterSqlite3(path);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    // Rows of a key or an account go with it (ON DELETE CASCADE). better-sqlite3's build turns foreign keys on
    // by default where SQLite's own is off: said here so that the cascade does not rest on a build option.
    db.pragma('foreign_keys = ON');
    const connection: Connection = { db, path, handles: 0, statements: new Map(), writes: 0, transaction: null, dataVersion: db.prepare('PRAGMA data_version') };
    if (!memory) connections.set(fileKey(path), connection);
    return connection;
  } catch (error) {
    throw openFailure(path, error);
  }
}

/**
 * Why a database file could not be opened, as one line with what to do. The
 * driver's native module failing to load is not the file's fault: npm 12
 * skips the install scripts of packages the installing project does not
 * allow (package.json's allowScripts), which leaves better-sqlite3 without
 * its compiled part, and a module built for another Node version does not
 * load either (ERR_DLOPEN_FAILED).
 */
export function openFailure(path: string, error: unknown): NetintelError {
  if (isDriverLoadFailure(error)) {
    return new NetintelError(
      'data_unavailable',
      `cannot open the key database ${path}: better-sqlite3, the SQLite driver, has no native module built for this Node (${process.version}): run npm rebuild better-sqlite3 in the directory netintel is installed in`,
      { cause: error, details: { path } },
    );
  }
  return new NetintelError('usage', `cannot open the key database ${path}: ${fileErrorReason(error)} (check the path and its permissions)`, { cause: error, details: { path } });
}

function isDriverLoadFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // The first is the \`bindings\` package's message when no build of the module exists.
  return error.message.startsWith('Could not locate the bindings file') || (error as NodeJS.ErrnoException).code === 'ERR_DLOPEN_FAILED';
}

/** The file's real path once it exists: one connection whatever path names it. */
function fileKey(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/** Makes the file (0600) and its directory (0700) when the file does not exist; an existing file is not touched. */
function createFile(path: string): void {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    // Made by another process in between: SQLite opens it as it is.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

function handle(connection: Connection): Database {
  let closed = false;
  const direct = queries(connection);
  return {
    dialect: 'sqlite',
    location: connection.path,
    skipLocked: '',
    // The check for an open transaction and the statement run in one turn of the event loop: nothing can start between them.
    async all(sql, params) {
      while (connection.transaction) await connection.transaction;
      return direct.all(sql, params);
    },
    async one(sql, params) {
      while (connection.transaction) await connection.transaction;
      return direct.one(sql, params);
    },
    async run(sql, params) {
      while (connection.transaction) await connection.transaction;
      return direct.run(sql, params);
    },
    transaction: (work) => transaction(connection, work),
    changeMark: () => `${(connection.dataVersion.get() as { data_version: number }).data_version}:${connection.writes}`,
    // A statement each time: a server's key checks ask at most once a second.
    changeMarkMaxAgeMs: 1000,
    async close() {
      if (closed) return;
      closed = true;
      while (connection.transaction) await connection.transaction;
      if (--connection.handles > 0) return;
      if (connections.get(fileKey(connection.path)) === connection) connections.delete(fileKey(connection.path));
      connection.db.close();
    },
  };
}

/**
 * One transaction at a time on the connection, and no other caller's
 * statement inside it: callers wait while one is open. The wait ends and
 * the next transaction begins in one turn of the event loop.
 */
async function transaction<T>(connection: Connection, work: (tx: Queryable) => Promise<T>): Promise<T> {
  while (connection.transaction) await connection.transaction;
  let end!: () => void;
  connection.transaction = new Promise((resolve) => (end = resolve));
  try {
    run(connection, 'BEGIN IMMEDIATE');
    const result = await work(queries(connection));
    run(connection, 'COMMIT');
    return result;
  } catch (error) {
    if (connection.db.inTransaction) connection.db.exec('ROLLBACK');
    throw error;
  } finally {
    connection.transaction = null;
    end();
  }
}

/** Statements run at once on the connection: inside the transaction that holds it, or when none is open. */
function queries(connection: Connection): Queryable {
  return {
    all: async <Row extends object>(sql: string, params: readonly SqlValue[] = []) => guarded(connection, () => statement(connection, sql).all(named(params)) as Row[]),
    one: async <Row extends object>(sql: string, params: readonly SqlValue[] = []) => guarded(connection, () => statement(connection, sql).get(named(params)) as Row | undefined),
    run: async (sql: string, params: readonly SqlValue[] = []) => run(connection, sql, params),
  };
}

function run(connection: Connection, sql: string, params: readonly SqlValue[] = []): number {
  return guarded(connection, () => {
    const changes = statement(connection, sql).run(named(params)).changes;
    connection.writes++;
    return changes;
  });
}

function statement(connection: Connection, sql: string): BetterSqlite3.Statement {
  let prepared = connection.statements.get(sql);
  if (prepared === undefined) {
    prepared = connection.db.prepare(sql);
    if (connection.statements.size >= MAX_STATEMENTS) connection.statements.clear();
    connection.statements.set(sql, prepared);
  }
  return prepared;
}

/** `$1 … $n` are SQLite named parameters called 1 … n. */
function named(params: readonly SqlValue[]): Record<number, string | number | Buffer | null> {
  const bound: Record<number, string | number | Buffer | null> = {};
  params.forEach((value, index) => {
    bound[index + 1] = value instanceof Date ? value.toISOString() : value;
  });
  return bound;
}

/** A failure of SQLite itself (busy past the timeout, disk full, I/O) as the error every store throws. */
function guarded<T>(connection: Connection, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof BetterSqlite3.SqliteError) {
      throw new NetintelError('data_unavailable', `the key database ${connection.path} failed: ${error.message} (${error.code})`, {
        cause: error,
        details: { path: connection.path, reason: error.code },
      });
    }
    throw error;
  }
}

/**
 * Applies the migrations the file lacks in one write transaction, so
 * processes opening the same file at once take turns and the later ones
 * find the work done; their count is kept in `PRAGMA user_version`. A file
 * from a newer netintel is left alone.
 */
async function migrateSqlite(database: Database, connection: Connection, migrations: readonly Migration[]): Promise<number[]> {
  const current = () => connection.db.pragma('user_version', { simple: true }) as number;
  if (current() >= migrations.length) return [];
  return database.transaction(async (tx) => {
    const applied: number[] = [];
    const from = current();
    for (const migration of migrations.slice(from)) {
      connection.db.exec(migration.sqlite);
      await migration.after?.(tx, 'sqlite');
      applied.push(migration.version);
    }
    if (applied.length > 0) connection.db.pragma(`user_version = ${from + applied.length}`);
    connection.writes++;
    return applied;
  });
}
