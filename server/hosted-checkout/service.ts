// The hosted pages' payments: what a payment intent's page and a payment link's page show (payable
// or not), and what a payment does: one transaction that charges through the sandbox acquirer
// (payment.ts), records the result (an intent's status, or a link order moved through its statuses),
// and enqueues the merchant notification (notification.ts). The form's rules: form.ts.
import { randomUUID } from 'node:crypto';
import type { CheckoutNotification } from '../http/contract.ts';
import { isGuid } from '../authentication/bearer.ts';
import { ApiError } from '../http/errors.ts';
import { enqueueCheckoutNotification } from '../notifications/outbox.ts';
import { createOrder, updateOrderStatus } from '../payment-link/orders.ts';
import type { PaymentMethods } from '../payment-link/payment-methods.ts';
import { paymentLinkRepository, type OrderStatus, type PaymentLinkRow } from '../payment-link/repository.ts';
import type { Queryable, Store } from '../store/store.ts';
import { webCheckoutRepository, type CheckoutSeller, type TechnicalConfigurationWithoutPassword } from '../web-checkout/repository.ts';
import { deniedByFraudPrevention } from '../web-checkout/service.ts';
import { httpUrlOf } from '../web-checkout/http-url.ts';
import { DEFAULT_TECHNICAL_CONFIGURATION } from '../web-checkout/technical-configuration.ts';
import { binOf, lastFourOf } from './card.ts';
import { addressOfForm, buyerOfForm, chosenPayment, type ChosenPayment, type Form } from './form.ts';
import { intentNotification, linkNotification, notificationPayment, type PaymentResult } from './notification.ts';
import { PageError } from './page-error.ts';
import { authorizeCheckoutPayment, intentStatusAfter, isSettled, newResult, orderStatusOf } from './payment.ts';
import { checkoutRepository, type CheckoutIntent } from './repository.ts';

type Frontend = NonNullable<CheckoutNotification['frontend']>;

async function recordPayment(tx: Queryable, p: { sellerId: string; checkoutId: string; intentId?: string; orderId?: string; chosen: ChosenPayment; amount: number; currency: string; result: PaymentResult }) {
  await checkoutRepository(tx).insertPayment({
    paymentId: p.result.paymentId,
    sellerId: p.sellerId,
    checkoutId: p.checkoutId,
    paymentIntentId: p.intentId ?? null,
    orderId: p.orderId ?? null,
    method: p.chosen.method,
    installments: p.chosen.installment?.number ?? null,
    amount: p.amount,
    currency: p.currency,
    cardBrand: p.chosen.card?.brand ?? null,
    cardBin: p.chosen.card ? binOf(p.chosen.card) : null,
    cardLastFour: p.chosen.card ? lastFourOf(p.chosen.card) : null,
    status: p.result.status,
    returnCode: p.result.returnCode,
    returnMessage: p.result.returnMessage,
    authorizationCode: p.result.authorizationCode ?? null,
    createdAt: p.result.at,
  });
}

// ---- payment intents ----

/** Where the page sends the customer after each result; absent: the page shows the result itself. */
export interface IntentRedirects {
  success?: string;
  error?: string;
}

/** A query parameter's name as decoded (`+` is a space), or undefined when it does not decode. */
function parameterName(pair: string): string | undefined {
  try {
    return decodeURIComponent(pair.split('=', 1)[0]!.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/**
 * `url` with `name=value` as its last query parameter (any earlier `name` dropped), the merchant's
 * other parameters kept as they were written: URLSearchParams would write the whole query again
 * (`%20` as `+`, `~` as `%7E`, `flag` as `flag=`), which breaks a signed or exactly matched return
 * address (attacker review, 2026-11-25).
 */
function withQueryParameter(url: URL, name: string, value: string): string {
  const kept = url.search === '' ? [] : url.search.slice(1).split('&').filter((pair) => parameterName(pair) !== name);
  url.search = [...kept, `${name}=${encodeURIComponent(value)}`].join('&');
  return url.toString();
}

/**
 * The merchant's success_url and error_url with the intent's id as a query parameter (contract
 * decision of this package). Computed before anything is charged: a stored URL that a browser cannot
 * follow (stored before the URL rule of the configuration existed) leaves the page unable to send the
 * customer on, so it takes no payment (409) rather than charge and fail.
 */
export function intentRedirects(configuration: TechnicalConfigurationWithoutPassword, paymentIntentId: string): IntentRedirects {
  const redirect = (stored: string | null) => {
    if (stored === null) return undefined;
    const url = httpUrlOf(stored);
    if (!url) throw new PageError(409, 'inactive', "This checkout is not taking payments at the moment: the store's return address is not valid. Please contact the store.");
    return withQueryParameter(url, 'payment_intent_id', paymentIntentId);
  };
  const success = redirect(configuration.successUrl);
  const error = redirect(configuration.errorUrl);
  return { ...(success ? { success } : {}), ...(error ? { error } : {}) };
}

export interface IntentPage {
  intent: CheckoutIntent;
  seller: CheckoutSeller;
  configuration: TechnicalConfigurationWithoutPassword;
  redirects: IntentRedirects;
}

/** The intent a page shows; unknown → 404, settled → 409, past expires_at → 410, no usable redirect → 409. */
export async function payableIntent(db: Queryable, paymentIntentId: string, now: Date, options: { forUpdate?: boolean } = {}): Promise<IntentPage> {
  // Only a GUID reaches the store: any other text, even 36 hex digits and dashes laid out otherwise, is a uuid column's error there.
  const intent = isGuid(paymentIntentId) ? await checkoutRepository(db).findIntent(paymentIntentId, options) : undefined;
  if (!intent) throw new PageError(404, 'not_found', 'This checkout does not exist.');
  if (isSettled(intent.status)) throw new PageError(409, 'already_paid', 'This checkout has already been paid.');
  if (intent.expiresAt.getTime() <= now.getTime()) throw new PageError(410, 'expired', 'This checkout has expired. Go back to the store to start again.');
  const web = webCheckoutRepository(db);
  const seller = (await web.findSeller(intent.sellerId))!;
  const configuration = (await web.findTechnicalConfigurationWithoutPassword(intent.sellerId)) ?? DEFAULT_TECHNICAL_CONFIGURATION;
  return { intent, seller, configuration, redirects: intentRedirects(configuration, intent.paymentIntentId) };
}

export interface IntentPaymentOutcome extends IntentPage {
  result: PaymentResult;
  deliveryId?: string;
}

/** Pays an intent: one transaction for the charge's result, the vaulted card and the notification. */
export async function payPaymentIntent(store: Store, p: { paymentIntentId: string; form: Form; frontend: Frontend; now: Date }): Promise<IntentPaymentOutcome> {
  return store.transaction(async (tx) => {
    const page = await payableIntent(tx, p.paymentIntentId, p.now, { forUpdate: true });
    const { intent, seller, configuration } = page;
    const chosen = chosenPayment(p.form, {
      country: seller.country,
      payments: seller.payments as PaymentMethods,
      flow: intent.flow,
      sellerThreeds: seller.services.threeds,
      requested3ds: intent.configurations['3ds'],
      now: p.now,
    });
    const decision = authorizeCheckoutPayment({ fraudPrevention: intent.fraudPreventionDenial, card: chosen.card, threeDs: chosen.threeDs, at: p.now });
    const vaulted = intent.flow === 'card_verification' && decision.status === 'Authorized' && chosen.card;
    const cardId = vaulted ? randomUUID() : undefined;
    if (vaulted && cardId) {
      await checkoutRepository(tx).insertVaultCard({
        cardId,
        sellerId: seller.sellerId,
        customerId: String(intent.customer.customer_id),
        brand: chosen.card!.brand ?? null,
        bin: binOf(chosen.card!),
        lastFour: lastFourOf(chosen.card!),
        expirationMonth: chosen.card!.expirationMonth,
        expirationYear: chosen.card!.expirationYear,
        cardholderName: chosen.card!.holder,
        createdAt: p.now,
      });
    }
    if (intent.flow === 'card_verification' && decision.status === 'Authorized') decision.returnMessage = 'Card verified';
    const result = newResult(decision, p.now, cardId);
    const checkoutId = intent.checkoutId ?? randomUUID();
    // Card verification charges nothing: amount 0 in the seller's first currency (contract decision).
    const amount = intent.amount ?? 0;
    const currency = intent.currency ?? seller.currencies[0]!;
    await recordPayment(tx, { sellerId: seller.sellerId, checkoutId, intentId: intent.paymentIntentId, chosen, amount, currency, result });
    await checkoutRepository(tx).recordIntentResult({
      paymentIntentId: intent.paymentIntentId,
      status: intentStatusAfter(intent.flow, result.status),
      checkoutId,
      paymentId: result.paymentId,
      bin: chosen.card ? binOf(chosen.card) : null,
      lastFour: chosen.card ? lastFourOf(chosen.card) : null,
      cardId: cardId ?? null,
      paidAt: result.status === 'Authorized' ? p.now : null,
    });
    let deliveryId: string | undefined;
    if (configuration.notificationUrl) {
      const payment = notificationPayment({ method: chosen.notifiedMethod, amount, currency, installment: chosen.installment, result });
      const payload = intentNotification({ checkoutId, intent, seller, payment, frontend: p.frontend });
      deliveryId = await enqueueCheckoutNotification(tx, seller.sellerId, payload, p.now);
    }
    return { ...page, intent: { ...intent, checkoutId }, result, deliveryId };
  });
}

// ---- payment links ----

export interface LinkPage {
  link: PaymentLinkRow;
  seller: CheckoutSeller;
  configuration: TechnicalConfigurationWithoutPassword;
}

/** The link a page shows; unknown → 404, INACTIVE → 403, EXPIRED (date, max_orders, or set) → 410. */
export async function payableLink(db: Queryable, shortId: string, now: Date): Promise<LinkPage> {
  const link = await paymentLinkRepository(db).findPaymentLinkByShortId(shortId, now);
  if (!link) throw new PageError(404, 'not_found', 'This payment link does not exist.');
  if (link.status === 'INACTIVE') throw new PageError(403, 'inactive', 'This payment link is not taking payments at the moment.');
  if (link.status === 'EXPIRED') {
    const soldOut = link.maxOrders !== null && link.successfulSales >= link.maxOrders;
    throw new PageError(410, 'expired', soldOut ? 'This payment link is sold out.' : 'This payment link has expired.');
  }
  return pageOf(db, link);
}

/** A link with its seller and the seller's page configuration. */
async function pageOf(db: Queryable, link: PaymentLinkRow): Promise<LinkPage> {
  const web = webCheckoutRepository(db);
  const seller = (await web.findSeller(link.sellerId))!;
  const configuration = (await web.findTechnicalConfigurationWithoutPassword(link.sellerId)) ?? DEFAULT_TECHNICAL_CONFIGURATION;
  return { link, seller, configuration };
}

export interface LinkOrderResult extends LinkPage {
  orderId: string;
  result: Pick<PaymentResult, 'status' | 'returnMessage'>;
}

/**
 * What the result page of a link's order shows (the payment form's post answers 303 to it): the
 * link whatever its status now (its last order may have sold it out), and the payment of the
 * order, which must be that link's; anything else names no page (404).
 */
export async function linkOrderResult(db: Queryable, shortId: string, orderId: string, now: Date): Promise<LinkOrderResult> {
  const link = await paymentLinkRepository(db).findPaymentLinkByShortId(shortId, now);
  const result = link && isGuid(orderId) ? await checkoutRepository(db).paymentOfLinkOrder(link.linkId, orderId) : undefined;
  if (!link || !result) throw new PageError(404, 'not_found', 'There is no such order on this payment link: check the link you were given.');
  return { ...(await pageOf(db, link)), orderId, result };
}

export interface LinkPaymentOutcome extends LinkPage {
  orderId: string;
  orderStatus: OrderStatus;
  result: PaymentResult;
  deliveryId?: string;
}

/**
 * Buys a link: the form is checked first (a refused form creates nothing), then in one transaction
 * the order is created (pending, the link locked: max_orders counted exactly), charged, moved to its
 * result status (a successful sale counted), and the payment_link notification enqueued.
 */
export async function payPaymentLink(store: Store, p: { shortId: string; form: Form; frontend: Frontend; now: Date }): Promise<LinkPaymentOutcome> {
  return store.transaction(async (tx) => {
    const page = await payableLink(tx, p.shortId, p.now);
    const { link, seller, configuration } = page;
    const customer = buyerOfForm(p.form, seller.country);
    const delivery = link.requestDeliveryAddress ? addressOfForm(p.form, 'delivery_', seller.country) : undefined;
    const chosen = chosenPayment(p.form, { country: seller.country, payments: link.payment, sellerThreeds: seller.services.threeds, now: p.now });
    const checkoutId = randomUUID();
    const { customer_id: _id, ...orderCustomer } = customer;
    const order = await createOrder(tx, {
      sellerId: seller.sellerId,
      linkId: link.linkId,
      customer: orderCustomer,
      shipping: { first_name: customer.first_name, name: customer.name, email: customer.email, ...(delivery ? { address: delivery } : {}) },
      checkoutId,
      description: `Payment submitted on the link's page (${chosen.method})`,
      at: p.now,
    }).catch((error: unknown) => {
      // The link was paid out or changed between the page check and the lock.
      if (error instanceof ApiError) throw new PageError(410, 'expired', 'This payment link is no longer taking payments.');
      throw error;
    });
    const decision = authorizeCheckoutPayment({ fraudPrevention: deniedByFraudPrevention(seller.country, customer.customer_id), card: chosen.card, threeDs: chosen.threeDs, at: p.now });
    const result = newResult(decision, p.now);
    const orderStatus = orderStatusOf(decision);
    await updateOrderStatus(tx, {
      sellerId: seller.sellerId,
      linkId: link.linkId,
      orderId: order.orderId,
      status: orderStatus,
      description: `${result.returnCode} ${result.returnMessage}`,
      at: p.now,
    });
    await recordPayment(tx, { sellerId: seller.sellerId, checkoutId, orderId: order.orderId, chosen, amount: order.amount, currency: order.currency, result });
    let deliveryId: string | undefined;
    if (configuration.notificationUrl) {
      const payment = notificationPayment({ method: chosen.notifiedMethod, amount: order.amount, currency: order.currency, installment: chosen.installment, result });
      const payload = linkNotification({ checkoutId, orderId: order.orderId, referenceCode: order.referenceCode, link, seller, customer, delivery, payment, frontend: p.frontend });
      deliveryId = await enqueueCheckoutNotification(tx, seller.sellerId, payload, p.now);
    }
    return { ...page, orderId: order.orderId, orderStatus, result, deliveryId };
  });
}
