// Plain SQL migrations, `server/store/migrations/NNN_name.sql`, applied in order and recorded in
// `schema_migrations`. A start with nothing pending costs one query. Each pending migration runs
// in its own transaction under a transaction-scoped advisory lock, and is checked again under it,
// so two instances starting at once on one PostgreSQL apply each migration exactly once.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.ts';
import { sealClearSecrets } from './seal-clear-secrets.ts';
import type { Queryable, Store } from './store.ts';

// Read from the package's sources (tsc does not emit .sql), whether this runs from server/ or dist/server/.
const MIGRATIONS_DIR = join(PACKAGE_ROOT, 'store', 'migrations');
const MIGRATION_FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;
/** Any fixed number shared by every instance; it names the lock, nothing else. */
const MIGRATION_LOCK = 7_242_001;
/** PostgreSQL's SQLSTATE for a relation that does not exist. */
const UNDEFINED_TABLE = '42P01';
/** What a migration does after its SQL, in its transaction, that SQL cannot do (encryption). */
const CODE_STEPS: Record<string, (tx: Queryable) => Promise<void>> = { '009_secrets_at_rest': sealClearSecrets };

export interface Migration {
  version: string;
  name: string;
  file: string;
}

export async function listMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  return files.map((file) => {
    const match = MIGRATION_FILE.exec(file);
    if (!match) throw new Error(`Migration file ${file} is not named NNN_name.sql`);
    return { version: match[1]!, name: match[2]!, file: join(dir, file) };
  });
}

/** The migrations recorded so far (version → name), read without a lock (none yet when the table does not exist). */
async function appliedVersions(db: Queryable): Promise<Map<string, string>> {
  try {
    const { rows } = await db.query<{ version: string; name: string }>('SELECT version, name FROM schema_migrations');
    return new Map(rows.map((r) => [r.version, r.name]));
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return new Map();
    throw error;
  }
}

export interface MigrateOptions {
  /**
   * Told the migrations recorded in the database that this version does not have (`NNN_name`): a
   * newer version of the sandbox migrated it. The start goes on (an instance left on the previous
   * version during a rolling upgrade), which a migration that is not additive would break.
   */
  onNewer?: (migrations: string[]) => void;
}

/** Applies the migrations not yet recorded; returns the versions it applied. */
export async function migrate(store: Store, dir = MIGRATIONS_DIR, options: MigrateOptions = {}): Promise<string[]> {
  const [migrations, recorded] = await Promise.all([listMigrations(dir), appliedVersions(store)]);
  const known = new Set(migrations.map((m) => m.version));
  const newer = [...recorded].filter(([version]) => !known.has(version)).map(([version, name]) => `${version}_${name}`);
  if (newer.length) options.onNewer?.(newer.sort());
  // Rows are only ever added, so a version seen recorded stays recorded: only the others are
  // pending, and each is checked again under the lock (another instance may apply it meanwhile).
  const pending = migrations.filter((m) => !recorded.has(m.version));
  const applied: string[] = [];
  for (const migration of pending) {
    const sql = await readFile(migration.file, 'utf8');
    const ran = await store.transaction(async (tx) => {
      // No statement time limit (postgres-store.ts): the lock waits for another instance's migration,
      // and a migration on a large database may be long.
      await tx.exec('SET LOCAL statement_timeout = 0');
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (done.rowCount > 0) return false;
      await tx.exec(sql);
      await CODE_STEPS[`${migration.version}_${migration.name}`]?.(tx);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
}
