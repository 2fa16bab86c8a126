// Payment intents: the rules that depend on the token's seller (the schema carries the rest), then
// the intent is stored with everything the hosted checkout page needs, and its address returned.
import { randomUUID } from 'node:crypto';
import { centsProblems, MAX_AMOUNT, withinAmountBound } from '../http/amounts.ts';
import { isGuid } from '../authentication/bearer.ts';
import type { components } from '../http/contract.ts';
import type { Problem } from '../http/errors.ts';
import { isValidCnpj, isValidCpf } from './documents.ts';
import { countryRuleViolation, fieldProblem, guidError, sellerNotFound, serviceNotEnabled, validationError } from './errors.ts';
import type { CheckoutSeller, PaymentIntentFlow, StoredPaymentIntent, WebCheckoutRepository } from './repository.ts';

type Schemas = components['schemas'];
export type PaymentIntentRequest = Schemas['PaymentIntentRequest'];
export type PaymentIntent = Schemas['PaymentIntent'];
/** Partial: the validator fills the contract's defaults in, but the rules do not rely on it. */
type Configurations = Partial<NonNullable<PaymentIntentRequest['configurations']>>;
/** What the rules read of a request. */
type RuledRequest = Pick<PaymentIntentRequest, 'customer' | 'payment' | 'product' | 'shipping' | 'additional_data'> & { configurations?: Configurations };

/** Contract decision: payable until Authorized or 24 hours after creation. */
export const PAYMENT_INTENT_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** The token's seller: its id must be a GUID (400 guid_error) and exist (404 not_found). */
export async function sellerOfToken(repository: WebCheckoutRepository, sellerId: string): Promise<CheckoutSeller> {
  if (!isGuid(sellerId)) throw guidError(sellerId);
  const seller = await repository.findSeller(sellerId);
  if (!seller) throw sellerNotFound(sellerId);
  return seller;
}

/** The seller's checkout service must be on for any payment intent (403 otherwise). */
export function requireCheckoutService(seller: CheckoutSeller): void {
  if (seller.services.checkout !== true) throw serviceNotEnabled('checkout');
}

const ARGENTINA_UNAVAILABLE = ['3ds', 'card_verification', 'preauthorization'] as const;

/** Argentina: 3ds, card_verification and preauthorization are unavailable; `true` is refused, `false` accepted. */
export function argentinaConfigurationViolations(country: string, configurations: Configurations | undefined): Problem[] {
  if (country !== 'AR' || !configurations) return [];
  return ARGENTINA_UNAVAILABLE.filter((name) => configurations[name] === true).map((name) =>
    fieldProblem(`configurations.${name}`, `${name} is unavailable for AR`),
  );
}

/** Allowed `customer.document_type` per seller country (CheckoutDocumentType). */
export const DOCUMENT_TYPES_BY_COUNTRY: Readonly<Record<string, readonly string[]>> = {
  BR: ['CPF', 'CNPJ'],
  AR: ['DNI'],
  CL: ['RUT'],
  MX: ['RFC'],
  UY: ['CI'],
  ES: ['DNI'],
};

/** The seller's country decides the document type; a country outside the table allows none. */
export function documentTypeViolations(country: string, documentType: string): Problem[] {
  const allowed = DOCUMENT_TYPES_BY_COUNTRY[country] ?? [];
  if (allowed.includes(documentType)) return [];
  const expected = allowed.length ? `allowed: ${allowed.join(', ')}` : 'no document type is defined for this country';
  return [fieldProblem('customer.document_type', `${documentType} is not allowed for a ${country} seller (${expected})`)];
}

/** BR: `document_number` is a valid CPF, or a valid CNPJ when `document_type` is CNPJ. */
export function brazilianDocumentViolations(country: string, customer: Pick<Schemas['CheckoutCustomer'], 'document_type' | 'document_number'>): Problem[] {
  if (country !== 'BR') return [];
  const { document_type: type, document_number: number } = customer;
  const valid = type === 'CNPJ' ? isValidCnpj(number) : isValidCpf(number);
  return valid ? [] : [fieldProblem('customer.document_number', `${JSON.stringify(number)} is not a valid ${type === 'CNPJ' ? 'CNPJ' : 'CPF'}`)];
}

/**
 * BR: a `customer_id` that is neither a valid CPF nor a valid CNPJ is accepted, but the checkout
 * denies its payment with FRAUD_PREVENTION (the seed's warning, made deterministic).
 */
export function deniedByFraudPrevention(country: string, customerId: string): boolean {
  return country === 'BR' && !isValidCpf(customerId) && !isValidCnpj(customerId);
}

/** `payment.currency` must be one of the seller's currencies. */
export function currencyViolations(seller: Pick<CheckoutSeller, 'currencies'>, payment: PaymentIntentRequest['payment']): Problem[] {
  if (!payment || seller.currencies.includes(payment.currency)) return [];
  return [fieldProblem('payment.currency', `${payment.currency} is not one of the seller's currencies (${seller.currencies.join(', ')})`)];
}

/** The contract's one amount rule (MinorUnitAmount, int32): the schema says so; kept for callers beyond the validator. */
export function amountViolations(payment: PaymentIntentRequest['payment']): Problem[] {
  if (!payment || withinAmountBound(payment.amount)) return [];
  return [fieldProblem('payment.amount', `must be at most ${MAX_AMOUNT}`)];
}

/**
 * The seed's money rule for every amount of the intent, all in `payment.currency`: a currency
 * without cents ends in 00. Checked once the currency is the seller's (else currencyViolations says so).
 * A card verification names no currency: its shipping amount and rates are in the one its hosted
 * page shows them in, the seller's first (a CLP seller's 15001 made that page answer 500).
 */
export function centsViolations(seller: Pick<CheckoutSeller, 'currencies'>, request: Pick<RuledRequest, 'payment' | 'product' | 'shipping' | 'additional_data'>): Problem[] {
  const currency = request.payment ? request.payment.currency : seller.currencies[0];
  if (!currency || !seller.currencies.includes(currency)) return [];
  return centsProblems(currency, [
    { pointer: '/payment/amount', value: request.payment?.amount },
    ...(request.product ?? []).map((p, i) => ({ pointer: `/product/${i}/value`, value: p.value })),
    { pointer: '/shipping/shipping_amount', value: request.shipping?.shipping_amount },
    ...(request.additional_data?.rates ?? []).map((r, i) => ({ pointer: `/additional_data/rates/${i}/value`, value: r.value })),
  ]);
}

/** card_verification and preauthorization `true` need the seller's service of the same name (403). */
export function requireFlowServices(seller: CheckoutSeller, configurations: Configurations | undefined): void {
  for (const service of ['card_verification', 'preauthorization'] as const) {
    if (configurations?.[service] === true && seller.services[service] !== true) throw serviceNotEnabled(service);
  }
}

/** The schema refuses both true together, so at most one flow switch is on. */
export function flowOf(configurations: Configurations | undefined): PaymentIntentFlow {
  if (configurations?.card_verification === true) return 'card_verification';
  if (configurations?.preauthorization === true) return 'preauthorization';
  return 'standard';
}

/** Every rule, in the order their statuses are decided: 403 checkout, 422 country, 403 flow, 422 fields. */
export function checkPaymentIntentRules(seller: CheckoutSeller, request: RuledRequest): void {
  requireCheckoutService(seller);
  const countryProblems = [
    ...argentinaConfigurationViolations(seller.country, request.configurations),
    ...documentTypeViolations(seller.country, request.customer.document_type),
  ];
  if (countryProblems.length) throw countryRuleViolation(countryProblems);
  requireFlowServices(seller, request.configurations);
  const fieldProblems = [
    ...amountViolations(request.payment),
    ...currencyViolations(seller, request.payment),
    ...centsViolations(seller, request),
    ...brazilianDocumentViolations(seller.country, request.customer),
  ];
  if (fieldProblems.length) throw validationError(fieldProblems);
}

export interface PaymentIntentServiceOptions {
  publicBaseUrl: string;
  now?: () => Date;
}

/** The hosted checkout page of an intent; opaque to clients. */
export const checkoutPageUrl = (publicBaseUrl: string, paymentIntentId: string) => `${publicBaseUrl}/checkout/${paymentIntentId}`;

export function paymentIntentService(repository: WebCheckoutRepository, options: PaymentIntentServiceOptions) {
  const now = options.now ?? (() => new Date());
  return {
    async createPaymentIntent(sellerId: string, request: PaymentIntentRequest): Promise<PaymentIntent> {
      const seller = await sellerOfToken(repository, sellerId);
      checkPaymentIntentRules(seller, request);
      const createdAt = now();
      const { order_id, payment, product, customer, shipping, configurations, ...orderDetails } = request;
      const intent: StoredPaymentIntent = {
        paymentIntentId: randomUUID(),
        sellerId: seller.sellerId,
        flow: flowOf(configurations),
        orderId: order_id ?? null,
        amount: payment?.amount ?? null,
        currency: payment?.currency ?? null,
        products: product ?? null,
        customer,
        shipping: shipping ?? null,
        orderDetails: pickOrderDetails(orderDetails),
        configurations: configurations ?? {},
        fraudPreventionDenial: deniedByFraudPrevention(seller.country, customer.customer_id),
        status: 'created',
        createdAt,
        expiresAt: new Date(createdAt.getTime() + PAYMENT_INTENT_LIFETIME_MS),
      };
      await repository.insertPaymentIntent(intent);
      return {
        payment_intent_id: intent.paymentIntentId,
        trade_name: seller.tradeName,
        redirect_url: checkoutPageUrl(options.publicBaseUrl, intent.paymentIntentId),
      };
    },
  };
}

const ORDER_DETAILS = ['pickup_store', 'shipping_method', 'soft_descriptor', 'dynamic_mcc', 'additional_data', 'sub_merchant'] as const;

/** Only the contract's fields are kept: an unknown property of the request is not stored. */
function pickOrderDetails(rest: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(ORDER_DETAILS.filter((key) => rest[key] !== undefined).map((key) => [key, rest[key]]));
}
