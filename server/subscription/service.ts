// The rules of the subscription API, each in one named function (checks in the contract's order).
import { randomUUID } from 'node:crypto';
import { brandOfBin } from '../acquirer/brands.ts';
import type { AccessTokenClaims } from '../authentication/access-tokens.ts';
import { LAST_DATE, withinPlatformDates } from '../http/formats.ts';
import type { components } from '../http/contract.ts';
import { centsProblems, MAX_AMOUNT, withinAmountBound } from '../http/amounts.ts';
import { ApiError, type Problem } from '../http/errors.ts';
import { recurrenceError, type RecurrenceErrorFields } from '../http/recurrence-errors.ts';
import { planRepository, type RecurrenceSeller, type StoredPlan } from '../plan/repository.ts';
import { auditActor, planOfSeller } from '../plan/service.ts';
import type { Queryable, Store } from '../store/store.ts';
import { testClockRepository } from './test-clock-repository.ts';
import { chargeInstallment, FINAL_SUBSCRIPTION_STATUSES } from './billing.ts';
import { notifyChargeResult } from './charge-notification.ts';
import { errorPayment, floatingDataOf, presentSubscription, type Subscription, type SubscriptionFloatingData } from './presenter.ts';
import {
  subscriptionRepository,
  type InstallmentRow,
  type PaymentMethod,
  type StoredPaymentType,
  type SubscriptionRepository,
  type SubscriptionRow,
} from './repository.ts';
import { installmentSchedule, parseDate, utcDate } from './schedule.ts';

type Schemas = components['schemas'];
export type CreateSubscriptionRequest = Schemas['CreateSubscriptionRequest'];
type RequestCard = Schemas['SubscriptionRequestCard'];

export const MESSAGES = {
  recurrenceOff: 'Product Recurrence is not enabled for the seller',
  sellerMismatch: 'seller_id does not match the authenticated seller',
  planInactive: 'Plan is inactive',
  paymentTypeMismatch: 'Payment type not accepted by the plan',
  debitInBrazil: 'Debit is not allowed in Brazil',
  startDateInPast: 'installment_start_date must not be in the past',
  unknownBrand: 'Card brand could not be determined from the bin',
  notFound: 'Signature not found',
  notActive: 'Subscription is not active',
  outsideCycle: "Installment is outside the plan's billing cycle",
  alreadyCharged: 'Installment has already been charged',
  dateOutOfOrder: 'new_scheduled_date must be after today and keep the installments in order',
  chargeTooLarge: `An installment plus the shippings must be at most ${MAX_AMOUNT} minor units`,
  scheduleTooLate: `The plan's installments from this start date would run past ${LAST_DATE}`,
  noCents: "An amount of a currency without cents must end in 00 (the plan's currency)",
} as const;

/** Every charge (an installment's amount plus the shippings) must be an amount the contract carries. */
export function chargesWithinBound(amounts: readonly number[], shippingAmount: number): boolean {
  return amounts.every((amount) => withinAmountBound(amount + shippingAmount)) && withinAmountBound(shippingAmount);
}

/** The card fields the contract requires outside Argentina (the seller's country is the token's). */
const CARD_FIELDS_OUTSIDE_AR = ['expiration_month', 'expiration_year', 'security_code'] as const;

const methodOf = (body: CreateSubscriptionRequest): PaymentMethod => ('credit' in body.subscription.payment_type ? 'credit' : 'debit');
const requestPaymentType = (body: CreateSubscriptionRequest) => {
  const type = body.subscription.payment_type as { credit?: Schemas['SubscriptionCreditPaymentTypeRequest']; debit?: Schemas['SubscriptionDebitPaymentTypeRequest'] };
  return (type.credit ?? type.debit)!;
};

/** 400 for each card field missing outside AR (the schema cannot know the country). */
export function requireCardFieldsOutsideArgentina(body: CreateSubscriptionRequest, country: string, sellerId: string): void {
  if (country === 'AR') return;
  const method = methodOf(body);
  const card = requestPaymentType(body).card as Partial<RequestCard>;
  const problems: Problem[] = CARD_FIELDS_OUTSIDE_AR.filter((field) => card[field] === undefined).map((field) => ({
    location: 'body',
    pointer: `/subscription/payment_type/${method}/card/${field}`,
    keyword: 'required',
    message: `${field} is required outside AR`,
  }));
  if (problems.length) throw new ApiError(400, undefined, 'Invalid request', problems, {}, { seller_id: sellerId });
}

/** 403 when the seller's Recurrence product is off (or the token's seller no longer exists). */
export function requireRecurrenceProduct(seller: RecurrenceSeller | undefined): asserts seller is RecurrenceSeller {
  if (!seller?.recurrenceEnabled) throw new RecurrenceProductOff();
}
export class RecurrenceProductOff extends Error {
  constructor() {
    super(MESSAGES.recurrenceOff);
    this.name = 'RecurrenceProductOff';
  }
}

/** Inactive plans take no new subscriptions. */
export function planTakesSubscriptions(plan: StoredPlan): boolean {
  return plan.status === 'active';
}

/** `credit` pays a `credit_card` plan, `debit` a `debit_card` plan. */
export function paymentTypeMatchesPlan(method: PaymentMethod, plan: StoredPlan): boolean {
  return plan.payment_types === (method === 'credit' ? 'credit_card' : 'debit_card');
}

/** Brazil: debit is not allowed for subscriptions. */
export function debitRefusedInBrazil(method: PaymentMethod, country: string): boolean {
  return method === 'debit' && country === 'BR';
}

/** Installment 1's date: the given start date (today or later, UTC), else today. */
export function installmentStartDate(given: string | undefined, today: string): { start: string; inPast: boolean } {
  if (given === undefined) return { start: today, inPast: false };
  return { start: given, inPast: given < today };
}

/** The request's brand, else the bin table's. */
export function cardBrand(card: Pick<RequestCard, 'brand' | 'bin'>): RequestCard['brand'] {
  return card.brand ?? brandOfBin(card.bin);
}

/** The payment type as kept and answered: card with bin, brand and card_id; no token, code or cryptogram. */
function storedPaymentType(body: CreateSubscriptionRequest, brand: NonNullable<RequestCard['brand']>): StoredPaymentType {
  const method = methodOf(body);
  const requested = requestPaymentType(body);
  const { card, tokenization } = requested;
  const cryptogramless = tokenization ? (({ cryptogram: _cryptogram, ...rest }) => rest)(tokenization) : undefined;
  return {
    ...(method === 'credit' ? { number_installments: (requested as Schemas['SubscriptionCreditPaymentTypeRequest']).number_installments } : {}),
    transaction_type: requested.transaction_type,
    ...(requested.billing_address ? { billing_address: requested.billing_address } : {}),
    ...(requested.soft_descriptor ? { soft_descriptor: requested.soft_descriptor } : {}),
    ...(cryptogramless ? { tokenization: cryptogramless } : {}),
    card: {
      brand,
      bin: card.bin,
      ...(card.expiration_month ? { expiration_month: card.expiration_month } : {}),
      ...(card.expiration_year ? { expiration_year: card.expiration_year } : {}),
      ...(card.cardholder_name ? { cardholder_name: card.cardholder_name } : {}),
      card_id: card.card_id ?? randomUUID(),
    },
    ...(requested.wallet ? { wallet: requested.wallet } : {}),
  };
}

/** Installment rows of the plan's schedule from `start`. */
function installmentRows(plan: StoredPlan, start: string): InstallmentRow[] {
  return installmentSchedule(plan, start).map((i) => ({
    installment: i.installment,
    originalScheduledDate: i.date,
    originalAmount: i.amount,
    scheduledDate: i.date,
    amount: i.amount,
    floating: false,
    status: 'scheduled',
    attempts: 0,
    nextAttemptOn: i.date,
  }));
}

/** The answered subscription, from its current row (read again after a change), installments and latest payment. */
async function answer(repo: SubscriptionRepository, plan: StoredPlan, subscription: SubscriptionRow, withFloatingData: boolean): Promise<Subscription> {
  const installments = await repo.listInstallments(subscription.subscriptionId);
  const payment = await repo.latestPayment(subscription.subscriptionId);
  return presentSubscription({ subscription, plan, installments, payment, withFloatingData });
}

export interface CreateSubscriptionInput {
  token: AccessTokenClaims;
  body: CreateSubscriptionRequest;
  username?: string;
  now?: Date;
}

/**
 * Creates a subscription: checks in the contract's order, then the installment rows, then (no
 * future start date) the charge of installment 1 through the acquirer. One transaction: nothing is
 * stored when a check fails.
 */
export async function createSubscription(store: Store, input: CreateSubscriptionInput): Promise<Subscription> {
  const { token, body } = input;
  const sellerId = token.sellerId;
  requireCardFieldsOutsideArgentina(body, token.country, sellerId);
  return store.transaction(async (tx) => {
    const plans = planRepository(tx);
    const repo = subscriptionRepository(tx);
    // A customer attached to a sandbox test clock subscribes on the clock's time (its own time line).
    const clock = await testClockRepository(tx).clockOfCustomer(sellerId, body.customer_id);
    const now = clock?.frozenTime ?? input.now ?? new Date();
    const seller = await plans.findSeller(sellerId);
    try {
      requireRecurrenceProduct(seller);
    } catch {
      throw recurrenceError(403, MESSAGES.recurrenceOff, { seller_id: sellerId });
    }
    if (body.seller_id.toLowerCase() !== sellerId.toLowerCase()) throw recurrenceError(422, MESSAGES.sellerMismatch, { seller_id: sellerId });
    const plan = await planOfSeller(plans, sellerId, body.plan_id);
    const refuse = (message: string, details?: Problem[]) =>
      recurrenceError(422, message, { combined_id: plan.plan_id, order_id: body.order_id, seller_id: sellerId } satisfies RecurrenceErrorFields, details);
    const method = methodOf(body);
    const today = utcDate(now);
    // The seed's country rule first: a Brazilian seller's plans cannot be active for debit, so after
    // the plan's checks a debit request would only ever hear of the plan, never of the rule.
    if (debitRefusedInBrazil(method, token.country)) throw refuse(MESSAGES.debitInBrazil);
    if (!planTakesSubscriptions(plan)) throw refuse(MESSAGES.planInactive);
    if (!paymentTypeMatchesPlan(method, plan)) throw refuse(MESSAGES.paymentTypeMismatch);
    const { start, inPast } = installmentStartDate(body.installment_start_date, today);
    if (inPast) throw refuse(MESSAGES.startDateInPast);
    const card = requestPaymentType(body).card;
    const brand = cardBrand(card);
    if (!brand) throw refuse(MESSAGES.unknownBrand);

    const installments = installmentRows(plan, start);
    if (!withinPlatformDates(installments[installments.length - 1]!.scheduledDate)) throw refuse(MESSAGES.scheduleTooLate);
    const shippings = body.subscription.shippings ?? [];
    const notCents = centsProblems(plan.currency, shippings.map((s, i) => ({ pointer: `/subscription/shippings/${i}/shipping_amount`, value: s.shipping_amount })));
    if (notCents.length) throw refuse(MESSAGES.noCents, notCents);
    const shippingAmount = shippings.reduce((sum, s) => sum + (s.shipping_amount ?? 0), 0);
    if (!chargesWithinBound(installments.map((i) => i.amount), shippingAmount)) throw refuse(MESSAGES.chargeTooLarge);
    const scheduled = start > today;
    const subscription: SubscriptionRow = {
      subscriptionId: randomUUID(),
      sellerId,
      planId: plan.plan_id,
      orderId: body.order_id ?? randomUUID(),
      customerId: body.customer_id,
      installmentStartDate: body.installment_start_date ?? null,
      createDate: now,
      paymentDate: parseDate(start)[2],
      status: scheduled ? 'created' : 'processing',
      statusDetails: scheduled ? `Scheduled; installment 1 of ${plan.period.billing_cycle} on ${start}` : `Installment 1 of ${plan.period.billing_cycle} processing`,
      paymentMethod: method,
      paymentType: storedPaymentType(body, brand),
      cardNumberToken: card.number_token,
      shippings: body.subscription.shippings ?? null,
      device: body.device ?? null,
      shippingAmount,
      testClockId: clock?.testClockId ?? null,
    };
    await repo.insertSubscription(subscription);
    await repo.insertInstallments(subscription.subscriptionId, sellerId, installments);
    if (!scheduled) {
      const { payment } = await chargeInstallment(repo, { subscription, installments, installment: installments[0]!, billingCycle: plan.period.billing_cycle, currency: plan.currency, now });
      if (payment) await notifyChargeResult(tx, { subscription, plan, payment, at: now });
    }
    await plans.recordAudit({ sellerId, actor: auditActor(input.username, token), clientId: token.clientId, action: 'subscription.create', objectId: subscription.subscriptionId });
    return answer(repo, plan, (await repo.findSubscription(sellerId, subscription.subscriptionId))!, false);
  });
}

/** The seller's subscription, or 404 `Signature not found`. */
export async function subscriptionOfSeller(repo: SubscriptionRepository, sellerId: string, subscriptionId: string, forUpdate = false): Promise<SubscriptionRow> {
  const subscription = await repo.findSubscription(sellerId, subscriptionId, { forUpdate });
  if (!subscription) throw subscriptionNotFound(sellerId, subscriptionId);
  return subscription;
}

const subscriptionNotFound = (sellerId: string, subscriptionId: string) =>
  recurrenceError(404, MESSAGES.notFound, { combined_id: subscriptionId, seller_id: sellerId });

/** The plan of a subscription (it never changes owner, so it is always found). */
async function planOfSubscription(store: Queryable, subscription: SubscriptionRow): Promise<StoredPlan> {
  return planOfSeller(planRepository(store), subscription.sellerId, subscription.planId);
}

/** The seller's subscription as answered, from one read (subscriptionRepository's findSubscriptionView). */
export async function getSubscription(store: Store, input: { token: AccessTokenClaims; subscriptionId: string; expand: readonly string[] }): Promise<Subscription> {
  const sellerId = input.token.sellerId;
  const view = await subscriptionRepository(store).findSubscriptionView(sellerId, input.subscriptionId);
  if (!view) throw subscriptionNotFound(sellerId, input.subscriptionId);
  const plan = view.plan ?? (await planOfSubscription(store, view.subscription)); // its 404, should the plan row be gone
  return presentSubscription({ ...view, plan, withFloatingData: input.expand.includes('floating_data') });
}

export type FloatingInstallmentUpdate = Schemas['FloatingInstallmentUpdate'];

/** Floating changes are refused on final subscriptions. */
export function subscriptionAcceptsChanges(subscription: Pick<SubscriptionRow, 'status'>): boolean {
  return !FINAL_SUBSCRIPTION_STATUSES.has(subscription.status);
}

/** Only an installment with no attempt yet (none paid, in flight or retried) may change. */
export function installmentNotCharged(installment: InstallmentRow): boolean {
  return installment.status === 'scheduled' && installment.attempts === 0;
}

/**
 * A new date is after today and strictly between the neighbours' current dates. The previous
 * installment's current date is its retry's when it waits for one: an installment moved before it
 * would be charged first, and the last one paid would end the subscription with an earlier one
 * still unpaid.
 */
export function newDateKeepsOrder(date: string, today: string, previous?: InstallmentRow, next?: InstallmentRow): boolean {
  const previousDate = previous?.status === 'retrying' && previous.nextAttemptOn && previous.nextAttemptOn > previous.scheduledDate ? previous.nextAttemptOn : previous?.scheduledDate;
  return date > today && (!previousDate || date > previousDate) && (!next || date < next.scheduledDate);
}

export async function updateFloatingInstallment(
  store: Store,
  input: { token: AccessTokenClaims; subscriptionId: string; installment: number; change: FloatingInstallmentUpdate; username?: string; now?: Date },
): Promise<{ subscription_id: string; floating_data: SubscriptionFloatingData[] }> {
  const { token, subscriptionId, installment: number, change } = input;
  const sellerId = token.sellerId;
  return store.transaction(async (tx) => {
    requireRecurrenceProduct(await planRepository(tx).findSeller(sellerId));
    const repo = subscriptionRepository(tx);
    const subscription = await subscriptionOfSeller(repo, sellerId, subscriptionId, true);
    // "Today" of a subscription on a sandbox test clock is the clock's.
    const now = input.now ?? (await testClockRepository(tx).timeOfSubscription(subscriptionId)) ?? new Date();
    const refuse = (message: string, payments?: ReturnType<typeof errorPayment>[], details?: Problem[]) =>
      recurrenceError(422, message, { combined_id: subscriptionId, order_id: subscription.orderId, seller_id: sellerId, payments }, details);
    if (!subscriptionAcceptsChanges(subscription)) throw refuse(MESSAGES.notActive);
    const installments = await repo.listInstallments(subscriptionId);
    const target = installments.find((i) => i.installment === number);
    if (!target) throw refuse(MESSAGES.outsideCycle);
    if (!installmentNotCharged(target)) {
      const latest = await repo.latestPayment(subscriptionId, number);
      throw refuse(MESSAGES.alreadyCharged, latest ? [errorPayment(latest)] : undefined);
    }
    const date = change.new_scheduled_date;
    if (date !== undefined) {
      const [previous, next] = [installments.find((i) => i.installment === number - 1), installments.find((i) => i.installment === number + 1)];
      if (!newDateKeepsOrder(date, utcDate(now), previous, next)) throw refuse(MESSAGES.dateOutOfOrder);
    }
    if (change.new_amount !== undefined) {
      const plan = await planRepository(tx).findPlan(sellerId, subscription.planId);
      const notCents = plan ? centsProblems(plan.currency, [{ pointer: '/new_amount', value: change.new_amount }]) : [];
      if (notCents.length) throw refuse(MESSAGES.noCents, undefined, notCents);
    }
    if (change.new_amount !== undefined && !chargesWithinBound([change.new_amount], subscription.shippingAmount)) throw refuse(MESSAGES.chargeTooLarge);
    const updated: InstallmentRow = {
      ...target,
      amount: change.new_amount ?? target.amount,
      scheduledDate: date ?? target.scheduledDate,
      nextAttemptOn: date ?? target.scheduledDate,
      floating: true,
    };
    await repo.updateInstallment(subscriptionId, updated);
    await planRepository(tx).recordAudit({ sellerId, actor: auditActor(input.username, token), clientId: token.clientId, action: 'subscription.floating_installment', objectId: `${subscriptionId}/${number}` });
    return { subscription_id: subscriptionId, floating_data: floatingDataOf(installments.map((i) => (i.installment === number ? updated : i))) };
  });
}
