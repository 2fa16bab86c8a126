// Test support of the web checkout suites: sellers of other countries (written straight to the
// sellers table with an API client, so these suites do not depend on the sandbox area), their
// tokens, and the stores the suites run on (PGlite, and PostgreSQL when DATABASE_URL is set).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Store } from '../../../server/store/store.ts';
import { freshStore, STORES } from './stores.ts';

const EXAMPLES = new URL('../../../openapi/web-checkout/components/examples/', import.meta.url).pathname;

/** A fresh copy of a named example of the web checkout contract (`PaymentIntentRequestStandard`). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function contractExample(name: string): any {
  return parse(readFileSync(`${EXAMPLES}${name}.yaml`, 'utf8')).value;
}

export interface StoreUnderTest {
  name: string;
  /** A store on an empty database; undefined lets startTestServer open PGlite in memory. */
  open(): Promise<Store | undefined>;
}

/**
 * PGlite in memory always; PostgreSQL too when DATABASE_URL is set, each suite on a schema of its
 * own (dropped after the file), so suites running at once do not see each other's rows.
 */
export function storesUnderTest(): StoreUnderTest[] {
  return STORES.map((kind) => ({ name: kind === 'postgres' ? 'PostgreSQL' : 'PGlite', open: () => freshStore(kind) }));
}
