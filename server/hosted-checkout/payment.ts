// The payment decision of a hosted page: fraud prevention first (nothing charged), then the sandbox
// acquirer (3DS failures only when 3DS runs), and what the result makes of an intent or a link order.
import { randomUUID } from 'node:crypto';
import { authorizationCode, charge, REASONS, type ChargeResult } from '../acquirer/index.ts';
import type { OrderStatus } from '../payment-link/repository.ts';
import type { TypedCard } from './card.ts';
import type { PaymentResult } from './notification.ts';
import type { CheckoutIntent } from './repository.ts';

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

/** The result of a decision, as recorded and notified. */
export function newResult(decision: ChargeDecision, at: Date, cardId?: string): PaymentResult {
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
