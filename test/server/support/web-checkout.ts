// Test support of the web checkout suites: sellers of other countries (written straight to the
// sellers table with an API client, so these suites do not depend on the sandbox area), their
// tokens, and the stores the suites run on (PGlite, and PostgreSQL when DATABASE_URL is set).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { authenticationRepository } from '../../../server/authentication/repository.ts';
import { hashClientSecret } from '../../../server/authentication/secrets.ts';
import { DEMO_SELLER } from '../../../server/sandbox/demo-seller.ts';
import type { Store } from '../../../server/store/store.ts';
import { freshStore, STORES } from './stores.ts';
import { GATEWAY_SCOPE, type TestServer } from './server.ts';

const EXAMPLES = new URL('../../../openapi/web-checkout/components/examples/', import.meta.url).pathname;

/** A fresh copy of a named example of the web checkout contract (`PaymentIntentRequestStandard`). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function contractExample(name: string): any {
  return parse(readFileSync(`${EXAMPLES}${name}.yaml`, 'utf8')).value;
}

export interface TestSeller {
  sellerId: string;
  clientId: string;
  clientSecret: string;
  tradeName: string;
  country: string;
}

export interface TestSellerOptions {
  country?: string;
  currencies?: string[];
  tradeName?: string;
  /** Merged over the demo seller's services (all on except unico_id). */
  services?: Record<string, boolean>;
}

/** The card part of a seller's payment configuration, as the demo seller has it. */
const cardPayments = { ...DEMO_SELLER.payments, bankslip: { enabled: false }, instant_payment: { enabled: false }, google_pay: { enabled: false }, apple_pay: { enabled: false } };

/** Inserts a seller and an API client for it; the secret is stored hashed, as the platform does. */
export async function insertTestSeller(store: Store, options: TestSellerOptions = {}): Promise<TestSeller> {
  const sellerId = randomUUID();
  const country = options.country ?? 'BR';
  const tradeName = options.tradeName ?? `Test seller ${country} ${sellerId.slice(0, 8)}`;
  const clientId = `test-client-${sellerId}`;
  const clientSecret = `secret-${randomUUID()}`;
  const secretHash = await hashClientSecret(clientSecret);
  await store.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO sellers (seller_id, merchant_id, seller_code, trade_name, email, country, currencies, services, payments, tenant)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        sellerId,
        `M-${sellerId.slice(0, 8)}`,
        `TEST-${country}-${sellerId.slice(0, 4)}`,
        tradeName,
        `seller-${sellerId.slice(0, 8)}@example.com`,
        country,
        options.currencies ?? ['BRL'],
        JSON.stringify({ ...DEMO_SELLER.services, ...options.services }),
        JSON.stringify(cardPayments),
        'sandbox',
      ],
    );
    await authenticationRepository(tx).insertApiClient({ clientId, sellerId, secretHash });
  });
  return { sellerId, clientId, clientSecret, tradeName, country };
}

/** An access token of the seller's client, from the first token form. */
export async function tokenOf(server: TestServer, seller: Pick<TestSeller, 'clientId' | 'clientSecret'>): Promise<string> {
  const res = await server.http
    .post('/authentication/oauth2/-core/access_token')
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: seller.clientId, client_secret: seller.clientSecret, scope: GATEWAY_SCOPE });
  if (res.status !== 200) throw new Error(`No token for ${seller.clientId}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.access_token;
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
