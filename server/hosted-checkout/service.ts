// The hosted pages' rules: what a payment intent's page and a payment link's page show, and what a
// payment does: one transaction that charges through the sandbox acquirer, records the result (an
// intent's status, or a link order moved through its statuses), and enqueues the merchant notification.
import { randomUUID } from 'node:crypto';
import type { CheckoutNotification } from '../http/contract.ts';
import { authorizationCode, charge, REASONS, type ChargeResult } from '../acquirer/index.ts';
import { ApiError } from '../http/errors.ts';
import { enqueueCheckoutNotification } from '../notifications/outbox.ts';
import { createOrder, updateOrderStatus } from '../payment-link/orders.ts';
import type { PaymentMethods } from '../payment-link/payment-methods.ts';
import { paymentLinkRepository, type OrderStatus, type PaymentLinkRow } from '../payment-link/repository.ts';
import type { Queryable, Store } from '../store/store.ts';
import { webCheckoutRepository, type CheckoutSeller, type StoredTechnicalConfiguration } from '../web-checkout/repository.ts';
import { DOCUMENT_TYPES_BY_COUNTRY, deniedByFraudPrevention } from '../web-checkout/service.ts';
import { httpUrlOf } from '../web-checkout/http-url.ts';
import { DEFAULT_TECHNICAL_CONFIGURATION } from '../web-checkout/technical-configuration.ts';
import { binOf, cardOfForm, lastFourOf, type TypedCard } from './card.ts';
import { notificationPayment, notificationSeller, platformReferenceCode, type PaymentResult } from './notification.ts';
import {
  acceptedBrand,
  installmentOptions,
  isWallet,
  offeredMethods,
  threeDsRuns,
  type CheckoutMethod,
  type InstallmentOption,
} from './payment-methods.ts';
import { checkoutRepository, type CheckoutIntent } from './repository.ts';

type Frontend = NonNullable<CheckoutNotification['frontend']>;
type Form = Record<string, unknown>;

/** Why a page cannot take a payment, or what the customer must fix; rendered as an HTML page. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly kind: 'not_found' | 'expired' | 'already_paid' | 'inactive' | 'form',
    message: string,
  ) {
    super(message);
  }
}

/** Intent statuses after which nothing more is paid (a Denied attempt leaves the intent payable). */
export const SETTLED_INTENT_STATUSES = ['paid', 'authorized', 'verified'] as const;
export const isSettled = (status: string) => (SETTLED_INTENT_STATUSES as readonly string[]).includes(status);

/** The intent's status after an Authorized result, per flow; `denied` after a Denied one. */
export function intentStatusAfter(flow: CheckoutIntent['flow'], status: PaymentResult['status']): string {
  if (status === 'Denied') return 'denied';
  return flow === 'preauthorization' ? 'authorized' : flow === 'card_verification' ? 'verified' : 'paid';
}

/** Contract decision on FRAUD_PREVENTION (CheckoutCustomer): nothing is charged. */
export const FRAUD_PREVENTION = { reasonCode: 'FRAUD_PREVENTION', reasonMessage: 'Denied by fraud prevention' };

/** Sandbox decision: a wallet pays with the wallet's own card, which the sandbox always approves. */
const WALLET_TOKEN = 'tok_sandbox_approved';

export interface ChargeDecision {
  status: 'Authorized' | 'Denied';
  returnCode: string;
  returnMessage: string;
  authorizationCode?: string;
  /** The acquirer's outcome, for the link order's status. */
  outcome: ChargeResult['outcome'] | 'fraud_prevention';
}

/**
 * The result of one payment: fraud prevention first (no charge), then the acquirer. A 3DS failure
 * can only happen when 3DS runs; otherwise that card is authorized like any other.
 */
export function authorizeCheckoutPayment(p: { fraudPrevention: boolean; card?: TypedCard; threeDs: boolean; at: Date }): ChargeDecision {
  if (p.fraudPrevention) return { status: 'Denied', returnCode: FRAUD_PREVENTION.reasonCode, returnMessage: FRAUD_PREVENTION.reasonMessage, outcome: 'fraud_prevention' };
  let result = charge(p.card ? { number: p.card.number } : { numberToken: WALLET_TOKEN }, p.at);
  if (result.outcome === 'authentication_denied' && !p.threeDs) {
    result = { ...result, outcome: 'approved', authorizationCode: authorizationCode(), reasonCode: REASONS.approved.reasonCode, reasonMessage: REASONS.approved.reasonMessage };
  }
  if (result.outcome === 'approved') {
    return { status: 'Authorized', returnCode: result.reasonCode, returnMessage: result.reasonMessage, authorizationCode: result.authorizationCode, outcome: 'approved' };
  }
  // pending and processing_error: the hosted page does not wait for a later result, so they are Denied.
  return { status: 'Denied', returnCode: result.reasonCode, returnMessage: result.reasonMessage, outcome: result.outcome };
}

/** The link order's status for a result (Order.status table). */
export function orderStatusOf(decision: ChargeDecision): OrderStatus {
  if (decision.status === 'Authorized') return 'approved';
  return decision.outcome === 'authentication_denied' ? 'authentication_denied' : 'denied';
}

interface ChosenPayment {
  method: CheckoutMethod;
  /** The card's function as the notification reports it (wallets: credit). */
  notifiedMethod: 'credit' | 'debit';
  card?: TypedCard;
  installment?: InstallmentOption;
  threeDs: boolean;
}

/** The method, card and installments of a form post, checked against what the page offers. */
export function chosenPayment(
  form: Form,
  p: { country: string; payments: PaymentMethods; flow?: CheckoutIntent['flow']; sellerThreeds?: boolean; requested3ds?: unknown; now: Date },
): ChosenPayment {
  const offered = offeredMethods(p.country, p.payments, p.flow);
  const method = form.method as CheckoutMethod;
  if (!offered.includes(method)) throw new PageError(422, 'form', 'Choose one of the payment methods offered.');
  if (isWallet(method)) return { method, notifiedMethod: 'credit', threeDs: false };
  const parsed = cardOfForm(form, p.now);
  if ('problem' in parsed) throw new PageError(422, 'form', parsed.problem);
  const brand = acceptedBrand(p.payments, method, parsed.card.brand);
  if (!brand) throw new PageError(422, 'form', `This ${method} card (${parsed.card.brand ?? 'unknown brand'}) is not accepted here.`);
  const count = Number(form.installments ?? 1);
  let installment: InstallmentOption | undefined;
  if (method === 'credit' && p.flow !== 'card_verification' && count !== 1) {
    installment = installmentOptions([brand]).find((o) => o.number === count);
    if (!installment) throw new PageError(422, 'form', `${parsed.card.brand} cards cannot be paid in ${form.installments} installments here.`);
  }
  return { method, notifiedMethod: method, card: parsed.card, installment, threeDs: threeDsRuns(p.sellerThreeds, brand, p.requested3ds) };
}

function newResult(decision: ChargeDecision, at: Date, cardId?: string): PaymentResult {
  return {
    paymentId: randomUUID(),
    status: decision.status,
    returnCode: decision.returnCode,
    returnMessage: decision.returnMessage,
    ...(decision.authorizationCode ? { authorizationCode: decision.authorizationCode } : {}),
    at,
    ...(cardId ? { cardId } : {}),
  };
}

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

/**
 * The merchant's success_url and error_url with the intent's id as a query parameter (contract
 * decision of this package). Computed before anything is charged: a stored URL that a browser cannot
 * follow (stored before the URL rule of the configuration existed) leaves the page unable to send the
 * customer on, so it takes no payment (409) rather than charge and fail.
 */
export function intentRedirects(configuration: StoredTechnicalConfiguration, paymentIntentId: string): IntentRedirects {
  const redirect = (stored: string | null) => {
    if (stored === null) return undefined;
    const url = httpUrlOf(stored);
    if (!url) throw new PageError(409, 'inactive', "This checkout is not taking payments at the moment: the store's return address is not valid. Please contact the store.");
    url.searchParams.set('payment_intent_id', paymentIntentId);
    return url.toString();
  };
  const success = redirect(configuration.successUrl);
  const error = redirect(configuration.errorUrl);
  return { ...(success ? { success } : {}), ...(error ? { error } : {}) };
}

export interface IntentPage {
  intent: CheckoutIntent;
  seller: CheckoutSeller;
  configuration: StoredTechnicalConfiguration;
  redirects: IntentRedirects;
}

/** The intent a page shows; unknown → 404, settled → 409, past expires_at → 410, no usable redirect → 409. */
export async function payableIntent(db: Queryable, paymentIntentId: string, now: Date, options: { forUpdate?: boolean } = {}): Promise<IntentPage> {
  const intent = /^[0-9a-f-]{36}$/i.test(paymentIntentId) ? await checkoutRepository(db).findIntent(paymentIntentId, options) : undefined;
  if (!intent) throw new PageError(404, 'not_found', 'This checkout does not exist.');
  if (isSettled(intent.status)) throw new PageError(409, 'already_paid', 'This checkout has already been paid.');
  if (intent.expiresAt.getTime() <= now.getTime()) throw new PageError(410, 'expired', 'This checkout has expired. Go back to the store to start again.');
  const web = webCheckoutRepository(db);
  const seller = (await web.findSeller(intent.sellerId))!;
  const configuration = (await web.findTechnicalConfiguration(intent.sellerId)) ?? DEFAULT_TECHNICAL_CONFIGURATION;
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
      const details = intent.orderDetails as Pick<CheckoutNotification, 'pickup_store' | 'shipping_method' | 'soft_descriptor'>;
      const payload: CheckoutNotification = {
        checkout_id: checkoutId,
        payment_intent_id: intent.paymentIntentId,
        ...(intent.orderId ? { order_id: intent.orderId } : {}),
        mode: 'instant',
        seller: notificationSeller(seller),
        customer: intent.customer as CheckoutNotification['customer'],
        ...(intent.shipping ? { shipping: intent.shipping as CheckoutNotification['shipping'] } : {}),
        payment: notificationPayment({ method: chosen.notifiedMethod, amount, currency, installment: chosen.installment, result }),
        frontend: p.frontend,
        ...(details.pickup_store !== undefined ? { pickup_store: details.pickup_store } : {}),
        ...(details.shipping_method !== undefined ? { shipping_method: details.shipping_method } : {}),
        ...(details.soft_descriptor !== undefined ? { soft_descriptor: details.soft_descriptor } : {}),
        reference_code: platformReferenceCode(),
        ...(intent.products ? { product: intent.products as CheckoutNotification['product'] } : {}),
      };
      deliveryId = await enqueueCheckoutNotification(tx, seller.sellerId, payload, p.now);
    }
    return { ...page, intent: { ...intent, checkoutId }, result, deliveryId };
  });
}

// ---- payment links ----

export interface LinkPage {
  link: PaymentLinkRow;
  seller: CheckoutSeller;
  configuration: StoredTechnicalConfiguration;
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
  const web = webCheckoutRepository(db);
  const seller = (await web.findSeller(link.sellerId))!;
  const configuration = (await web.findTechnicalConfiguration(link.sellerId)) ?? DEFAULT_TECHNICAL_CONFIGURATION;
  return { link, seller, configuration };
}

type CheckoutCustomer = CheckoutNotification['customer'] & object;
type CheckoutAddress = CheckoutCustomer['billing_address'];

const field = (form: Form, name: string, max: number, label: string, required = true): string | undefined => {
  const value = typeof form[name] === 'string' ? (form[name] as string).trim() : '';
  if (!value) {
    if (required) throw new PageError(422, 'form', `${label} is required.`);
    return undefined;
  }
  if (value.length > max) throw new PageError(422, 'form', `${label} has at most ${max} characters.`);
  return value;
};

/** An address of the form (`prefix` '' for billing, 'delivery_' for delivery), within the contract's limits. */
function addressOfForm(form: Form, prefix: string, country: string): CheckoutAddress {
  const what = prefix ? 'Delivery' : 'Billing';
  const postal = field(form, `${prefix}postal_code`, 9, `${what} postal code`)!.replace(/[\s-]/g, '');
  if (!/^[A-Za-z0-9]{1,8}$/.test(postal)) throw new PageError(422, 'form', `${what} postal code has at most 8 letters or digits.`);
  const optional = (name: string, max: number, label: string) => {
    const value = field(form, `${prefix}${name}`, max, `${what} ${label}`, false);
    return value ? { [name]: value } : {};
  };
  return {
    street: field(form, `${prefix}street`, 60, `${what} street`)!,
    number: field(form, `${prefix}number`, 10, `${what} number`)!,
    ...optional('complement', 60, 'complement'),
    ...optional('district', 40, 'district'),
    ...optional('city', 40, 'city'),
    ...optional('state', 20, 'state'),
    country,
    postal_code: postal,
  };
}

/** The buyer of a link page: the checkout customer (customer_id = the document digits), checked. */
export function buyerOfForm(form: Form, country: string): CheckoutCustomer {
  const first = field(form, 'first_name', 60, 'First name')!;
  const last = field(form, 'last_name', 60, 'Last name')!;
  const email = field(form, 'email', 120, 'E-mail')!;
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new PageError(422, 'form', 'The e-mail address is not valid.');
  const types = DOCUMENT_TYPES_BY_COUNTRY[country] ?? [];
  const documentType = String(form.document_type ?? types[0] ?? '');
  if (!types.includes(documentType)) throw new PageError(422, 'form', `The document type must be one of ${types.join(', ')}.`);
  const documentNumber = field(form, 'document_number', 20, 'Document number')!.replace(/[\s./-]/g, '');
  if (!/^[A-Za-z0-9]+$/.test(documentNumber)) throw new PageError(422, 'form', 'The document number has letters and digits only.');
  const phone = field(form, 'phone_number', 20, 'Phone number', false);
  return {
    customer_id: documentNumber,
    first_name: first,
    last_name: last,
    name: `${first} ${last}`,
    email,
    document_type: documentType as CheckoutCustomer['document_type'],
    document_number: documentNumber,
    ...(phone ? { phone_number: phone } : {}),
    billing_address: addressOfForm(form, '', country),
  };
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
      const payload: CheckoutNotification = {
        checkout_id: checkoutId,
        order_id: order.orderId,
        mode: 'payment_link',
        seller: notificationSeller(seller),
        customer,
        ...(delivery
          ? { shipping: { first_name: customer.first_name, last_name: customer.last_name, name: customer.name, shipping_amount: link.shippingAmount, address: delivery } }
          : {}),
        payment: notificationPayment({ method: chosen.notifiedMethod, amount: order.amount, currency: order.currency, installment: chosen.installment, result }),
        frontend: p.frontend,
        reference_code: order.referenceCode,
        product: link.products.map((product) => ({
          ...(product.product_type ? { product_type: product.product_type } : {}),
          title: product.title,
          ...(product.description ? { description: product.description } : {}),
          value: product.amount,
          quantity: product.quantity ?? 1,
        })) as CheckoutNotification['product'],
      };
      deliveryId = await enqueueCheckoutNotification(tx, seller.sellerId, payload, p.now);
    }
    return { ...page, orderId: order.orderId, orderStatus, result, deliveryId };
  });
}
