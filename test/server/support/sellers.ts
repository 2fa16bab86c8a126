// The one way tests insert a seller straight into the store (for sellers the sandbox API does not
// make: another country's, recurrence off, services off), and the one way they get its token.
// Sellers made through the API are createSeller (payment-link.ts).
import { randomUUID } from 'node:crypto';
import { authenticationRepository } from '../../../server/authentication/repository.ts';
import { hashClientSecret, hashCostOf } from '../../../server/authentication/secrets.ts';
import { DEMO_SELLER } from '../../../server/sandbox/demo-seller.ts';
import type { Store } from '../../../server/store/store.ts';
import { GATEWAY_SCOPE, type TestServer } from './server.ts';

export interface InsertedSeller {
  sellerId: string;
  clientId: string;
  clientSecret: string;
  tradeName: string;
  country: string;
}

export interface InsertSellerOptions {
  country?: string;
  currencies?: string[];
  tradeName?: string;
  /** Merged over the demo seller's services (all on except unico_id). */
  services?: Record<string, boolean>;
  /** The seller's payment methods (default: the demo seller's cards only). */
  payments?: object;
  email?: string;
  /** Whether the recurrence product is enabled (default true). */
  recurrence?: boolean;
}

/** The card part of a seller's payment configuration, as the demo seller has it. */
const cardPayments = { ...DEMO_SELLER.payments, bankslip: { enabled: false }, instant_payment: { enabled: false }, google_pay: { enabled: false }, apple_pay: { enabled: false } };

/** Inserts a seller and an API client for it; the secret is stored hashed, as the platform does (at the store's cost). */
export async function insertSeller(store: Store, options: InsertSellerOptions = {}): Promise<InsertedSeller> {
  const sellerId = randomUUID();
  const country = options.country ?? 'BR';
  const tradeName = options.tradeName ?? `Test seller ${country} ${sellerId.slice(0, 8)}`;
  const clientId = `test-client-${sellerId}`;
  const clientSecret = `secret-${randomUUID()}`;
  const secretHash = await hashClientSecret(clientSecret, hashCostOf(store));
  await store.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO sellers (seller_id, merchant_id, seller_code, trade_name, email, country, currencies, services, payments, tenant, recurrence_enabled)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        sellerId,
        `M-${sellerId.slice(0, 8)}`,
        `TEST-${country}-${sellerId.slice(0, 4)}`,
        tradeName,
        options.email ?? `seller-${sellerId.slice(0, 8)}@example.com`,
        country,
        options.currencies ?? ['BRL'],
        JSON.stringify({ ...DEMO_SELLER.services, ...options.services }),
        JSON.stringify(options.payments ?? cardPayments),
        'sandbox',
        options.recurrence ?? true,
      ],
    );
    await authenticationRepository(tx).insertApiClient({ clientId, sellerId, secretHash });
  });
  return { sellerId, clientId, clientSecret, tradeName, country };
}

/** An access token of the seller's client, from the first token form. */
export async function tokenOf(server: TestServer, seller: { clientId: string; clientSecret: string }): Promise<string> {
  const res = await server.http
    .post('/authentication/oauth2/-core/access_token')
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: seller.clientId, client_secret: seller.clientSecret, scope: GATEWAY_SCOPE });
  if (res.status !== 200) throw new Error(`No token for ${seller.clientId}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.access_token;
}
