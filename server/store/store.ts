// The one storage interface of the reference server: PostgreSQL SQL, spoken either by embedded
// PGlite (a data directory on disk, or memory) or by a PostgreSQL server through `pg`.
import type { SealedSecrets } from './sealed-secrets.ts';

export interface QueryResult<T> {
  rows: T[];
  /** Rows returned by a SELECT, or changed by an INSERT, UPDATE or DELETE. */
  rowCount: number;
}

/** Something that runs SQL: the store itself, or the client of one transaction. */
export interface Queryable {
  /** One statement, with `$1`-style parameters. Pass jsonb values as `JSON.stringify(value)`. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** A script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Seals and opens secrets kept at rest, under the store's key: set by openStore, on its transactions too. */
  readonly atRest?: SealedSecrets;
  /**
   * Tells the store's listeners (`Store.onAnnounced`) that `topic` happened: once the transaction
   * commits, if this runs in one (never if it rolls back), at once otherwise. Set by openStore.
   */
  announce?(topic: StoreTopic): void;
}

/** What a store announces to its listeners: a notification delivery became due; the token signing keys were rotated. */
export type StoreTopic = 'notification-due' | 'signing-keys-rotated';

/**
 * How a driver carries announcements to the store's other instances (PostgreSQL: NOTIFY and LISTEN,
 * postgres-announcements.ts); absent where one process holds the database (PGlite). Used by openStore.
 */
export interface OtherInstances {
  /** Tells the other instances (this one hears nothing back); dropped on failure. */
  publish(topic: StoreTopic): void;
  /**
   * Calls `heard` with what another instance published, from now until the store closes (once:
   * later calls do nothing), and with every topic after a lost connection listens again.
   */
  listen(heard: (topic: StoreTopic) => void): void;
}

export interface Store extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<R>(fn: (tx: Queryable) => Promise<R>): Promise<R>;
  /**
   * Calls `listener` when `topic` is announced through this store or its transactions, or through
   * another instance on the same PostgreSQL database and schema (soon after, when its notification
   * arrives); returns how to stop. Set by openStore.
   */
  onAnnounced?(topic: StoreTopic, listener: () => void): () => void;
  /** Set by the PostgreSQL driver. */
  readonly otherInstances?: OtherInstances;
  /**
   * Set by openStore: the key file it made beside a data directory that already held a cluster (the
   * file was missing). A start refused because a secret does not open with it says so.
   */
  readonly madeKeyFile?: string;
  /**
   * Set by openStore: nothing of this store outlives its process (PGlite in memory). Client secrets
   * are then hashed at a lower cost (authentication/secrets.ts, hashCostOf).
   */
  readonly inMemory?: boolean;
  close(): Promise<void>;
}

/**
 * SQL of an instant (a timestamptz column) as milliseconds since the epoch, for a value read as
 * JSON (row_to_json, json_agg). JSON has no instant: PostgreSQL would write it as text in the
 * session's time zone, whose historic offsets carry seconds (São Paulo before 1914: `-03:06:28`)
 * that `Date` cannot read. Floored, as the driver's own Dates keep whole milliseconds.
 */
export const instantAsEpochMs = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)`;

/**
 * A driver's error with the statement's values taken out, so that no log line or response carries
 * them (a merchant's notification password is one): PGlite's `params` holds them all, PostgreSQL's
 * `detail`, `where`, `hint` and `internalQuery` may quote them, and its message quotes the input it
 * could not read (`invalid input syntax for type uuid: "..."`, `value "..." is out of range for
 * type integer`). The SQL text, SQLSTATE `code`, table and constraint stay for the log.
 */
export function rethrowWithoutValues(error: unknown): never {
  if (error instanceof Error) {
    const fields = error as Error & Record<string, unknown>;
    for (const field of ['params', 'detail', 'where', 'hint', 'internalQuery']) delete fields[field];
    const quoted = error.message;
    error.message = withoutQuotedValues(quoted);
    error.stack = error.stack?.replace(quoted, error.message);
  }
  throw error;
}

/**
 * The database could not be reached or stopped answering. PostgreSQL: a connection refused, lost or
 * timed out, the server shutting down; the store tells each outage once (`onReachChange`). PGlite:
 * its thread stopped, or its data directory's lock was given up; told once (`onFailure`), and every
 * later call throws this. So the requests and passes that fail meanwhile are not each logged with a
 * stack; `cause` holds the first error.
 */
export class StoreUnavailable extends Error {
  override name = 'StoreUnavailable';
}

/** A PostgreSQL error message without the input it quotes (rethrowWithoutValues). */
export function withoutQuotedValues(message: string): string {
  return message.replace(/: ".*"$/s, ': "[redacted]"').replace(/^value ".*" is out of range/s, 'value "[redacted]" is out of range');
}

/** The sealed secrets of a store, or of one of its transactions. */
export function sealedSecretsOf(db: Queryable): SealedSecrets {
  if (!db.atRest) throw new Error('This store was not opened by openStore: it has no encryption key for secrets at rest');
  return db.atRest;
}
