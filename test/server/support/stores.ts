// Fresh, migrated stores for suites that run on every store kind: in-memory PGlite always, and a
// PostgreSQL server (a schema of its own per store) when DATABASE_URL is set.
import { randomUUID } from 'node:crypto';
import { migrate } from '../../../server/store/migrate.ts';
import { openStore, type Store } from '../../../server/store/store.ts';

export interface StoreKind {
  name: string;
  /** A new empty database, migrated; `again()` opens a second store on the same database (another instance). */
  fresh(): Promise<{ store: Store; again: () => Promise<Store>; drop: () => Promise<void> }>;
}

const pglite: StoreKind = {
  name: 'PGlite',
  async fresh() {
    const store = await openStore({});
    await migrate(store);
    return { store, again: async () => store, drop: () => store.close() };
  },
};

const postgres = (databaseUrl: string): StoreKind => ({
  name: 'PostgreSQL',
  async fresh() {
    const schema = `t_${randomUUID().replace(/-/g, '')}`;
    const admin = await openStore({ databaseUrl });
    await admin.exec(`CREATE SCHEMA ${schema}`);
    const url = new URL(databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const opened: Store[] = [];
    const open = async () => {
      const s = await openStore({ databaseUrl: url.toString() });
      opened.push(s);
      return s;
    };
    const store = await open();
    await migrate(store);
    return {
      store,
      again: open,
      drop: async () => {
        for (const s of opened) await s.close();
        await admin.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.close();
      },
    };
  },
});

/** PGlite, plus PostgreSQL when DATABASE_URL is set. */
export const STORE_KINDS: StoreKind[] = process.env.DATABASE_URL ? [pglite, postgres(process.env.DATABASE_URL)] : [pglite];
