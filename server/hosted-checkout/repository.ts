// SQL of the hosted checkout: the intent a page shows (found by its id alone: the page is public,
// its id is the capability), the seller and configuration it needs, and the payment results.
import type { Queryable } from '../store/store.ts';
import type { StoredPaymentIntent } from '../web-checkout/repository.ts';

export interface CheckoutIntent extends StoredPaymentIntent {
  checkoutId: string | null;
  paymentId: string | null;
  cardId: string | null;
}

export interface CheckoutPaymentRow {
  paymentId: string;
  sellerId: string;
  checkoutId: string;
  paymentIntentId: string | null;
  orderId: string | null;
  method: string;
  installments: number | null;
  amount: number;
  currency: string;
  cardBrand: string | null;
  cardBin: string | null;
  cardLastFour: string | null;
  status: 'Authorized' | 'Denied';
  returnCode: string;
  returnMessage: string;
  authorizationCode: string | null;
  createdAt: Date;
}

export interface VaultCardRow {
  cardId: string;
  sellerId: string;
  customerId: string;
  brand: string | null;
  bin: string;
  lastFour: string;
  expirationMonth: string;
  expirationYear: string;
  cardholderName: string;
  createdAt: Date;
}

const INTENT_COLUMNS = `
  payment_intent_id AS "paymentIntentId", seller_id AS "sellerId", flow, order_id AS "orderId",
  amount, currency, products, customer, shipping, order_details AS "orderDetails", configurations,
  fraud_prevention_denial AS "fraudPreventionDenial", status, created_at AS "createdAt", expires_at AS "expiresAt",
  checkout_id AS "checkoutId", payment_id AS "paymentId", card_id AS "cardId"`;

const intent = (row: CheckoutIntent): CheckoutIntent => ({ ...row, amount: row.amount === null ? null : Number(row.amount) });

export function checkoutRepository(db: Queryable) {
  return {
    /** Any seller's intent: the page's address is the capability. `forUpdate` serialises payments of one intent. */
    async findIntent(paymentIntentId: string, options: { forUpdate?: boolean } = {}): Promise<CheckoutIntent | undefined> {
      const { rows } = await db.query<CheckoutIntent>(
        `SELECT ${INTENT_COLUMNS} FROM payment_intents WHERE payment_intent_id = $1 ${options.forUpdate ? 'FOR UPDATE' : ''}`,
        [paymentIntentId],
      );
      return rows[0] && intent(rows[0]);
    },

    async recordIntentResult(r: {
      paymentIntentId: string;
      status: string;
      checkoutId: string;
      paymentId: string;
      bin: string | null;
      lastFour: string | null;
      cardId: string | null;
      paidAt: Date | null;
    }): Promise<void> {
      await db.query(
        `UPDATE payment_intents SET status = $2, checkout_id = $3, payment_id = $4, card_bin = $5, card_last_four = $6,
                card_id = $7, paid_at = $8
          WHERE payment_intent_id = $1`,
        [r.paymentIntentId, r.status, r.checkoutId, r.paymentId, r.bin, r.lastFour, r.cardId, r.paidAt],
      );
    },

    async insertPayment(p: CheckoutPaymentRow): Promise<void> {
      await db.query(
        `INSERT INTO checkout_payments (payment_id, seller_id, checkout_id, payment_intent_id, order_id, method, installments,
           amount, currency, card_brand, card_bin, card_last_four, status, return_code, return_message, authorization_code, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        [
          p.paymentId, p.sellerId, p.checkoutId, p.paymentIntentId, p.orderId, p.method, p.installments, p.amount, p.currency,
          p.cardBrand, p.cardBin, p.cardLastFour, p.status, p.returnCode, p.returnMessage, p.authorizationCode, p.createdAt,
        ],
      );
    },

    async paymentsOfIntent(paymentIntentId: string): Promise<CheckoutPaymentRow[]> {
      const { rows } = await db.query<CheckoutPaymentRow>(
        `SELECT payment_id AS "paymentId", seller_id AS "sellerId", checkout_id AS "checkoutId", payment_intent_id AS "paymentIntentId",
                order_id AS "orderId", method, installments, amount, currency, card_brand AS "cardBrand", card_bin AS "cardBin",
                card_last_four AS "cardLastFour", status, return_code AS "returnCode", return_message AS "returnMessage",
                authorization_code AS "authorizationCode", created_at AS "createdAt"
           FROM checkout_payments WHERE payment_intent_id = $1 ORDER BY created_at`,
        [paymentIntentId],
      );
      return rows.map((r) => ({ ...r, amount: Number(r.amount) }));
    },

    /** The payment of a payment link's order, when the order is that link's: what its result page shows. */
    async paymentOfLinkOrder(linkId: string, orderId: string): Promise<Pick<CheckoutPaymentRow, 'status' | 'returnMessage'> | undefined> {
      const { rows } = await db.query<Pick<CheckoutPaymentRow, 'status' | 'returnMessage'>>(
        `SELECT p.status, p.return_message AS "returnMessage"
           FROM checkout_payments p JOIN payment_link_orders o ON o.order_id = p.order_id
          WHERE p.order_id = $1 AND o.link_id = $2`,
        [orderId, linkId],
      );
      return rows[0];
    },

    async insertVaultCard(c: VaultCardRow): Promise<void> {
      await db.query(
        `INSERT INTO vault_cards (card_id, seller_id, customer_id, brand, bin, last_four, expiration_month, expiration_year, cardholder_name, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [c.cardId, c.sellerId, c.customerId, c.brand, c.bin, c.lastFour, c.expirationMonth, c.expirationYear, c.cardholderName, c.createdAt],
      );
    },
  };
}
