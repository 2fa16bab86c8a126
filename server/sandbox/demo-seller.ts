// The demo seller every fresh sandbox starts with, so that a token can be had with no set-up:
// a Brazilian seller charging in BRL, with the demo client credentials from the config.
import type { Logger } from 'pino';
import { authenticationRepository } from '../authentication/repository.ts';
import { hashClientSecret, verifyClientSecret } from '../authentication/secrets.ts';
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

/** Creates the demo seller and its client when absent; never changes an existing one. */
export async function ensureDemoSeller(store: Store, client: { clientId: string; clientSecret: string }, logger: Logger): Promise<void> {
  const secretHash = await hashClientSecret(client.clientSecret);
  await store.transaction(async (tx) => {
    const s = DEMO_SELLER;
    await tx.query(
      `INSERT INTO sellers (seller_id, merchant_id, seller_code, trade_name, email, country, currencies, services, payments, tenant)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (seller_id) DO NOTHING`,
      [s.seller_id, s.merchant_id, s.seller_code, s.trade_name, s.email, s.country, s.currencies, JSON.stringify(s.services), JSON.stringify(s.payments), s.tenant],
    );
    await authenticationRepository(tx).insertApiClient({ clientId: client.clientId, sellerId: s.seller_id, secretHash });
    // Its saved link defaults (GET /payment-links/business-configurations): its payments, in BRL.
    await paymentLinkRepository(tx).insertBusinessConfiguration(s.seller_id, DEMO_BUSINESS_CONFIGURATION);
  });
  // An existing client keeps its secret; say so when the configured one would not work.
  const existing = await authenticationRepository(store).findApiClient(client.clientId);
  if (existing && !(await verifyClientSecret(client.clientSecret, existing.secretHash))) {
    logger.warn({ clientId: client.clientId }, 'The demo client already exists with another secret; SANDBOX_DEMO_CLIENT_SECRET is not its secret');
  }
}
