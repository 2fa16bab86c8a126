// SQL of the web checkout area: the seller it works for, payment intents and technical
// configurations. Every read and write takes the seller id of the access token. The notification
// password is sealed at rest (server/store/sealed-secrets.ts): sealed on write, opened on read.
import { notificationPasswordContext, SealedSecretUnreadable } from '../store/sealed-secrets.ts';
import { sealedSecretsOf, type Queryable } from '../store/store.ts';

/** What the web checkout needs to know about the token's seller. */
export interface CheckoutSeller {
  sellerId: string;
  tradeName: string;
  country: string;
  currencies: string[];
  /** The seller's service flags; an absent flag means the service is off. */
  services: Record<string, boolean | undefined>;
  payments: Record<string, unknown>;
}

export type PaymentIntentFlow = 'standard' | 'preauthorization' | 'card_verification';

/** A payment intent as stored: everything the hosted checkout page needs later. */
export interface StoredPaymentIntent {
  paymentIntentId: string;
  sellerId: string;
  flow: PaymentIntentFlow;
  orderId: string | null;
  amount: number | null;
  currency: string | null;
  products: unknown[] | null;
  customer: Record<string, unknown>;
  shipping: Record<string, unknown> | null;
  orderDetails: Record<string, unknown>;
  configurations: Record<string, unknown>;
  fraudPreventionDenial: boolean;
  status: string;
  createdAt: Date;
  expiresAt: Date;
}

/** A seller's technical configuration without its notification password (which stays sealed): what the hosted pages and billing need. */
export type TechnicalConfigurationWithoutPassword = Omit<StoredTechnicalConfiguration, 'notificationPassword'>;

/**
 * The password of a configuration locked for an update, when this instance cannot open it (another
 * encryption key sealed it: an instance on an old key wrote it). An update that does not replace it
 * keeps it as stored; an update never needs the old password in clear. No request's password is this:
 * the contract's Text refuses control characters.
 */
export const UNOPENED_PASSWORD = '\u0000unopened';

/** The stored technical configuration, password included (never leaves the server except as Basic auth). */
export interface StoredTechnicalConfiguration {
  primaryColor: string;
  accentColor: string;
  typeFace: string;
  successUrl: string | null;
  errorUrl: string | null;
  notificationUrl: string | null;
  notificationAuthenticationType: string | null;
  notificationUser: string | null;
  notificationPassword: string | null;
}

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

const PAYMENT_INTENT_COLUMNS = `
  payment_intent_id AS "paymentIntentId", seller_id AS "sellerId", flow, order_id AS "orderId",
  amount, currency, products, customer, shipping, order_details AS "orderDetails", configurations,
  fraud_prevention_denial AS "fraudPreventionDenial", status, created_at AS "createdAt", expires_at AS "expiresAt"`;

const CONFIGURATION_COLUMNS = `
  primary_color AS "primaryColor", accent_color AS "accentColor", type_face AS "typeFace",
  success_url AS "successUrl", error_url AS "errorUrl", notification_url AS "notificationUrl",
  notification_authentication_type AS "notificationAuthenticationType",
  notification_user AS "notificationUser", sealed_notification_password AS "notificationPassword"`;


/** bigint comes back as a string from `pg`; amounts are within the safe integer range (checked on write). */
const withNumericAmount = (row: StoredPaymentIntent): StoredPaymentIntent => ({ ...row, amount: row.amount === null ? null : Number(row.amount) });

export function webCheckoutRepository(db: Queryable) {
  /** A configuration row as read: its sealed password opened. */
  const opened = (sellerId: string, row: StoredTechnicalConfiguration): StoredTechnicalConfiguration => ({
    ...row,
    notificationPassword: row.notificationPassword === null ? null : sealedSecretsOf(db).open(row.notificationPassword, notificationPasswordContext(sellerId)),
  });

  return {
    async findSeller(sellerId: string): Promise<CheckoutSeller | undefined> {
      const { rows } = await db.query<CheckoutSeller>(
        `SELECT seller_id AS "sellerId", trade_name AS "tradeName", country, currencies, services, payments
           FROM sellers WHERE seller_id = $1`,
        [sellerId],
      );
      return rows[0];
    },

    async insertPaymentIntent(intent: StoredPaymentIntent): Promise<void> {
      await db.query(
        `INSERT INTO payment_intents (payment_intent_id, seller_id, flow, order_id, amount, currency, products, customer,
           shipping, order_details, configurations, fraud_prevention_denial, status, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
        [
          intent.paymentIntentId,
          intent.sellerId,
          intent.flow,
          intent.orderId,
          intent.amount,
          intent.currency,
          json(intent.products),
          json(intent.customer),
          json(intent.shipping),
          json(intent.orderDetails),
          json(intent.configurations),
          intent.fraudPreventionDenial,
          intent.status,
          intent.createdAt,
          intent.expiresAt,
        ],
      );
    },

    /** The seller's payment intent; another seller's id finds nothing. */
    async findPaymentIntent(sellerId: string, paymentIntentId: string): Promise<StoredPaymentIntent | undefined> {
      const { rows } = await db.query<StoredPaymentIntent>(
        `SELECT ${PAYMENT_INTENT_COLUMNS} FROM payment_intents WHERE seller_id = $1 AND payment_intent_id = $2`,
        [sellerId, paymentIntentId],
      );
      return rows[0] && withNumericAmount(rows[0]);
    },

    async findTechnicalConfiguration(sellerId: string): Promise<StoredTechnicalConfiguration | undefined> {
      const { rows } = await db.query<StoredTechnicalConfiguration>(
        `SELECT ${CONFIGURATION_COLUMNS} FROM web_checkout_configurations WHERE seller_id = $1`,
        [sellerId],
      );
      return rows[0] && opened(sellerId, rows[0]);
    },

    /**
     * The configuration without opening its password: a password another key sealed (an instance on
     * an old encryption key wrote it) fails only what sends it, not the seller's hosted pages or charges.
     */
    async findTechnicalConfigurationWithoutPassword(sellerId: string): Promise<TechnicalConfigurationWithoutPassword | undefined> {
      const { rows } = await db.query<StoredTechnicalConfiguration>(
        `SELECT ${CONFIGURATION_COLUMNS} FROM web_checkout_configurations WHERE seller_id = $1`,
        [sellerId],
      );
      if (!rows[0]) return undefined;
      const { notificationPassword: _sealed, ...rest } = rows[0];
      return rest;
    },

    /**
     * The stored configuration, locked until the transaction ends, created with `defaults` first when
     * absent: two concurrent updates of one seller merge one after the other, none is lost. A password
     * this instance cannot open is UNOPENED_PASSWORD.
     */
    async lockTechnicalConfiguration(sellerId: string, defaults: StoredTechnicalConfiguration): Promise<StoredTechnicalConfiguration> {
      await db.query(
        `INSERT INTO web_checkout_configurations (seller_id, primary_color, accent_color, type_face)
         VALUES ($1, $2, $3, $4) ON CONFLICT (seller_id) DO NOTHING`,
        [sellerId, defaults.primaryColor, defaults.accentColor, defaults.typeFace],
      );
      const { rows } = await db.query<StoredTechnicalConfiguration>(
        `SELECT ${CONFIGURATION_COLUMNS} FROM web_checkout_configurations WHERE seller_id = $1 FOR UPDATE`,
        [sellerId],
      );
      try {
        return opened(sellerId, rows[0]!);
      } catch (error) {
        if (!(error instanceof SealedSecretUnreadable)) throw error;
        return { ...rows[0]!, notificationPassword: UNOPENED_PASSWORD };
      }
    },

    /** Stores `c`; an UNOPENED_PASSWORD keeps the stored one as it is. */
    async updateTechnicalConfiguration(sellerId: string, c: StoredTechnicalConfiguration): Promise<void> {
      const kept = c.notificationPassword === UNOPENED_PASSWORD;
      await db.query(
        `UPDATE web_checkout_configurations
            SET primary_color = $2, accent_color = $3, type_face = $4, success_url = $5, error_url = $6,
                notification_url = $7, notification_authentication_type = $8, notification_user = $9,
                sealed_notification_password = CASE WHEN $11 THEN sealed_notification_password ELSE $10 END, updated_at = now()
          WHERE seller_id = $1`,
        [
          sellerId,
          c.primaryColor,
          c.accentColor,
          c.typeFace,
          c.successUrl,
          c.errorUrl,
          c.notificationUrl,
          c.notificationAuthenticationType,
          c.notificationUser,
          c.notificationPassword === null || kept ? null : sealedSecretsOf(db).seal(c.notificationPassword, notificationPasswordContext(sellerId)),
          kept,
        ],
      );
    },
  };
}

export type WebCheckoutRepository = ReturnType<typeof webCheckoutRepository>;
