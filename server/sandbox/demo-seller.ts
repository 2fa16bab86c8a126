// The demo seller every fresh sandbox starts with, so that a token can be had with no set-up:
// a Brazilian seller charging in BRL, with the demo client credentials from the config.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { authenticationRepository } from '../authentication/repository.ts';
import { costParameters, hashClientSecret, hashCostOf, verifyClientSecret, type HashCost } from '../authentication/secrets.ts';
import type { Store } from '../store/store.ts';
import type { PaymentMethods } from '../payment-link/payment-methods.ts';
import { paymentLinkRepository } from '../payment-link/repository.ts';

/** Fixed, so that docs and examples can name it (it is the seller of the contract's token example). */
export const DEMO_SELLER_ID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';

const cardInstallments = [
  {
    schema: 'BR_STANDARD',
    schema_name: 'Parcelado loja',
    installments: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    installments_with_interest: [7, 8, 9, 10, 11, 12],
    installments_with_increase: [{ installments: [10, 11, 12], rate: 2.99 }],
  },
];
const creditBrand = (brand: string) => ({ enabled: true, brand, currencies: ['BRL'], threeds: true, supported_installments: cardInstallments });
const debitBrand = (brand: string) => ({ enabled: true, brand, currencies: ['BRL'], threeds: true });

export const DEMO_SELLER = {
  seller_id: DEMO_SELLER_ID,
  merchant_id: '000000012345678',
  seller_code: 'DEMO-BR-0001',
  trade_name: 'Café da Montanha',
  email: 'financeiro@cafedamontanha.com.br',
  country: 'BR',
  currencies: ['BRL'],
  tenant: 'sandbox',
  services: {
    checkout: true,
    vault: true,
    card_verification: true,
    preauthorization: true,
    unico_id: false,
    threeds: true,
    anti_fraud: true,
    payment_link: true,
    tokenization: true,
  },
  // Every BR method on; c2p_master is Argentina-only, so it is off.
  payments: {
    credit: { enabled: true, brands: ['VISA', 'MASTERCARD', 'ELO', 'AMEX', 'HIPERCARD'].map(creditBrand) },
    debit: { enabled: true, brands: ['VISA', 'MASTERCARD', 'ELO'].map(debitBrand) },
    bankslip: { enabled: true },
    instant_payment: { enabled: true },
    google_pay: { enabled: true },
    apple_pay: { enabled: true },
    c2p_master: { enabled: false },
  },
};

/** The demo seller's payment link defaults: its own payments and currency, no expiration or limit. */
export const DEMO_BUSINESS_CONFIGURATION = {
  expiration: null,
  maxOrders: null,
  requestDeliveryAddress: false,
  payment: DEMO_SELLER.payments as PaymentMethods, // brand names are the contract's CardBrand values
  currency: 'BRL',
};

type DemoClient = { clientId: string; clientSecret: string };

/**
 * Creates the demo seller, its client and its link defaults when absent; never changes existing
 * ones. At most one scrypt per start: a new client's secret is hashed (once per process,
 * demoSecretHash); an existing client's stored hash is never re-hashed, only checked against the
 * configured secret, to warn when they differ.
 */
export async function ensureDemoSeller(store: Store, client: DemoClient, logger: Logger): Promise<void> {
  const { secretChecked } = await seedDemoSeller(store, client, logger);
  await secretChecked;
}

/**
 * `ensureDemoSeller` in two steps, for a start that overlaps its work: resolves once the demo seller
 * and its client are stored; `secretChecked` is the check of an existing client's secret (scrypt,
 * on libuv's thread pool), still running then: await it too.
 */
export async function seedDemoSeller(store: Store, client: DemoClient, logger: Logger): Promise<{ secretChecked: Promise<void> }> {
  const done = { secretChecked: Promise.resolve() };
  let existing = await authenticationRepository(store).findApiClient(client.clientId);
  // A restart starts the check at once, so that it runs while the rows below are written.
  if (existing) done.secretChecked = checkSecret(existing.secretHash, client, logger);
  const secretHash = existing ? undefined : await demoSecretHash(client.clientSecret, hashCostOf(store));
  const created = await store.transaction(async (tx) => {
    const s = DEMO_SELLER;
    await tx.query(
      `INSERT INTO sellers (seller_id, merchant_id, seller_code, trade_name, email, country, currencies, services, payments, tenant)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (seller_id) DO NOTHING`,
      [s.seller_id, s.merchant_id, s.seller_code, s.trade_name, s.email, s.country, s.currencies, JSON.stringify(s.services), JSON.stringify(s.payments), s.tenant],
    );
    const inserted = secretHash !== undefined && (await authenticationRepository(tx).insertApiClient({ clientId: client.clientId, sellerId: s.seller_id, secretHash }));
    // Its saved link defaults (GET /payment-links/business-configurations): its payments, in BRL.
    await paymentLinkRepository(tx).insertBusinessConfiguration(s.seller_id, DEMO_BUSINESS_CONFIGURATION);
    return inserted;
  });
  if (!existing && !created) {
    // Another instance starting at once on the same PostgreSQL stored the client first.
    existing = await authenticationRepository(store).findApiClient(client.clientId);
    if (existing) done.secretChecked = checkSecret(existing.secretHash, client, logger);
  }
  return done;
}

/** The demo secrets hashed by this process, by SHA-256 of the secret (a few at most: one per SANDBOX_DEMO_CLIENT_SECRET used). */
const demoHashes = new Map<string, Promise<string>>();
const MAX_DEMO_HASHES = 4;

/**
 * The demo client's secret hashed once per process: a later sandbox of the process (the next test
 * file of a test worker, each with its own in-memory sandbox) stores the same salted hash instead
 * of paying scrypt (65–230 ms of CPU at the stored cost) again. The salt is then shared by those
 * sandboxes' copies of one secret, which tells a reader of their databases only that the secrets are
 * the same: they are the configured demo secret, public by default. A failed hash is not kept. One
 * hash per cost (a sandbox in memory hashes at a lower one, authentication/secrets.ts).
 */
function demoSecretHash(secret: string, cost: HashCost): Promise<string> {
  // Keyed by a digest: the process keeps no demo secret in memory after its sandboxes close.
  const key = `${costParameters(cost)}$${createHash('sha256').update(secret, 'utf8').digest('base64')}`;
  let hash = demoHashes.get(key);
  if (!hash) {
    if (demoHashes.size >= MAX_DEMO_HASHES) demoHashes.delete(demoHashes.keys().next().value!);
    hash = hashClientSecret(secret, cost);
    demoHashes.set(key, hash);
    const made = hash;
    made.catch(() => demoHashes.get(key) === made && demoHashes.delete(key));
  }
  return hash;
}

/** An existing client keeps its secret; say so when the configured one would not work. */
function checkSecret(secretHash: string, client: DemoClient, logger: Logger): Promise<void> {
  const checked = verifyClientSecret(client.clientSecret, secretHash).then((ok) => {
    if (!ok) logger.warn({ clientId: client.clientId }, 'The demo client already exists with another secret; SANDBOX_DEMO_CLIENT_SECRET is not its secret');
  });
  checked.catch(() => {}); // handled by whoever awaits it, even if the seeding fails first
  return checked;
}
