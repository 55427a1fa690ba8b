import type { Pool, PoolClient, QueryResult } from 'pg';
import { NetintelError } from '../errors.js';
import type { Database, Queryable, SqlValue } from './database.js';
import { MIGRATIONS, type Migration } from './migrations.js';
import { followKeyChanges, type ChangeFollower } from './postgres-changes.js';
import { parsePostgresUrl, postgresEndpoint, postgresPassword, redactPostgresUrl } from './postgres-url.js';

export interface PostgresOptions {
  /** Connections held at once (default 10; the CLI's commands use 1). */
  maxConnections?: number;
  /** Time to connect before giving up, in ms (default 10 s). */
  connectTimeoutMs?: number;
  /** Time a query may take, in ms (default 10 s): a database that stops answering fails requests rather than holding them. */
  queryTimeoutMs?: number;
}

/**
 * The key of the advisory lock migrations run under ("netintel" in ASCII):
 * servers starting at once take turns, and the later ones find the work done.
 */
const MIGRATION_LOCK = '7954893355463943532';

/**
 * A pool on the database `url` names (node-postgres), with the migrations
 * it lacks applied. Every server given the same URL shares the data.
 *
 * @throws NetintelError `usage` for a URL that cannot be read;
 *   `data_unavailable` when the database cannot be reached or migrated.
 *   No message holds the URL's password.
 */
export async function openPostgresDatabase(url: string, options: PostgresOptions = {}, migrations: readonly Migration[] = MIGRATIONS): Promise<Database> {
  parsePostgresUrl(url);
  const endpoint = postgresEndpoint(url);
  const password = postgresPassword(url);
  const hide = (text: string): string => (password === null ? text : text.split(password).join('***'));
  const unavailable = (error: unknown, what: string): NetintelError =>
    new NetintelError('data_unavailable', hide(`${what} PostgreSQL at ${endpoint}: ${reasonOf(error)} (check --db)`), {
      details: { db: redactPostgresUrl(url), ...((error as { code?: unknown }).code === undefined ? {} : { reason: String((error as { code?: unknown }).code) }) },
    });

  const { default: pg } = await import('pg');
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    application_name: 'netintel',
  });
  // A connection the server drops while idle is replaced at the next query; its error must not end the process.
  pool.on('error', () => {});

  const connect = async (): Promise<PoolClient> => {
    try {
      return await pool.connect();
    } catch (error) {
      throw unavailable(error, 'cannot connect to');
    }
  };
  const transaction = async <T>(work: (tx: Queryable) => Promise<T>): Promise<T> => {
    const client = await connect();
    try {
      await client.query('BEGIN');
      const result = await work(queries((text, values) => client.query(text, values), unavailable));
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release();
      if (error instanceof NetintelError) throw error;
      throw unavailable(error, 'cannot query');
    }
  };

  const client = await connect().catch(async (error: unknown) => {
    await pool.end().catch(() => {});
    throw error;
  });
  try {
    await migratePostgres(client, migrations);
    client.release();
  } catch (error) {
    client.release(true);
    await pool.end().catch(() => {});
    throw unavailable(error, 'cannot apply the schema migrations of');
  }

  let follower: ChangeFollower | undefined;
  return {
    dialect: 'postgres',
    location: redactPostgresUrl(url),
    skipLocked: ' FOR UPDATE SKIP LOCKED',
    ...queries((text, values) => pool.query(text, values), unavailable),
    transaction,
    // Started by the first question, which only a server's key checks ask: a command opens no listening connection.
    changeMark: () => (follower ??= followKeyChanges(pg, url, pool)).mark(),
    changeMarkMaxAgeMs: 0,
    async close() {
      await follower?.close();
      await pool.end();
    },
  };
}

type Send = (text: string, values: unknown[]) => Promise<QueryResult>;

function queries(send: Send, unavailable: (error: unknown, what: string) => NetintelError): Queryable {
  const rowsOf = async <Row extends object>(sql: string, params: readonly SqlValue[]): Promise<Row[]> => {
    try {
      return (await send(sql, [...params])).rows.map(isoTimes) as Row[];
    } catch (error) {
      throw unavailable(error, 'cannot query');
    }
  };
  return {
    all: (sql, params = []) => rowsOf(sql, params),
    one: async <Row extends object>(sql: string, params: readonly SqlValue[] = []) => (await rowsOf<Row>(sql, params))[0],
    async run(sql, params = []) {
      try {
        return (await send(sql, [...params])).rowCount ?? 0;
      } catch (error) {
        throw unavailable(error, 'cannot query');
      }
    },
  };
}

/** timestamptz columns come back as Date: the stores read ISO strings, as SQLite keeps them. */
function isoTimes(row: Record<string, unknown>): Record<string, unknown> {
  for (const name in row) {
    const value = row[name];
    if (value instanceof Date) row[name] = value.toISOString();
  }
  return row;
}

/**
 * Applies the migrations the database lacks, in order, in one transaction
 * under a transaction-level advisory lock, each recorded in
 * `schema_migrations`. Versions the database has beyond the list (a newer
 * netintel migrated it) are left alone.
 *
 * @returns the versions applied by this call.
 */
export async function migratePostgres(client: PoolClient, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const applied: number[] = [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version));
    const tx = queries((text, values) => client.query(text, values), (error) => error as NetintelError);
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      await client.query(migration.postgres);
      await migration.after?.(tx, 'postgres');
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
  return applied;
}

/**
 * What went wrong, on one line: a connection tried on several addresses
 * fails with an AggregateError whose own message is empty.
 */
function reasonOf(error: unknown): string {
  const errors = error instanceof AggregateError ? error.errors : [error];
  const reasons = errors.map((each) => (each instanceof Error ? each.message || String((each as { code?: unknown }).code ?? each.name) : String(each)));
  return reasons.join('; ').replace(/\s*\n\s*/g, ' ');
}
