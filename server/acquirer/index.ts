// The sandbox acquirer: the one place that decides a card charge's outcome, deterministically, from
// the card alone (documented test cards by vault token or by full card number; README.md). It keeps
// nothing and logs nothing: the card number or token is read, matched and forgotten.
import { randomInt, randomUUID } from 'node:crypto';
import { brandOfBin, type CardBrand } from './brands.ts';

/** What the acquirer says about a charge; the caller maps it to its own statuses. */
export type ChargeOutcome = 'approved' | 'denied' | 'authentication_denied' | 'pending' | 'processing_error';

/** A card as the caller has it: a vault token (subscriptions) or a full number (hosted checkout). */
export type ChargeCard = { numberToken: string; brand?: CardBrand } | { number: string; brand?: CardBrand };

export interface ChargeResult {
  outcome: ChargeOutcome;
  /** Empty unless approved (the contract's "a field the acquirer did not give is an empty string"). */
  authorizationCode: string;
  reasonCode: string;
  reasonMessage: string;
  /** A sentence on the refusal, for the payment's error details; absent when approved or pending. */
  reasonDetail?: string;
  acquirer: string;
  acquirerTransactionId: string;
  transactionId: string;
  terminalNsu: string;
  /** Instant of the authorization, when approved. */
  authorizationTimestamp?: Date;
  brand?: CardBrand;
}

export const SANDBOX_ACQUIRER = 'SANDBOX';

interface Reason {
  outcome: ChargeOutcome;
  reasonCode: string;
  reasonMessage: string;
  reasonDetail?: string;
}

/** Reason codes and messages of each outcome (README.md). */
export const REASONS: Record<ChargeOutcome | 'invalid_card_number', Reason> = {
  approved: { outcome: 'approved', reasonCode: '00', reasonMessage: 'Transaction approved' },
  denied: {
    outcome: 'denied',
    reasonCode: '51',
    reasonMessage: 'Insufficient funds',
    reasonDetail: 'The issuer refused the transaction for lack of funds',
  },
  authentication_denied: {
    outcome: 'authentication_denied',
    reasonCode: '1A',
    reasonMessage: '3DS authentication denied',
    reasonDetail: 'The cardholder failed the 3DS authentication',
  },
  pending: { outcome: 'pending', reasonCode: 'P0', reasonMessage: 'Awaiting the acquirer result' },
  processing_error: {
    outcome: 'processing_error',
    reasonCode: '96',
    reasonMessage: 'System malfunction',
    reasonDetail: 'The acquirer could not process the transaction',
  },
  invalid_card_number: {
    outcome: 'denied',
    reasonCode: '14',
    reasonMessage: 'Invalid card number',
    reasonDetail: 'The card number fails the Luhn check',
  },
};

/** Documented test vault tokens (README.md); any other token is approved. */
export const TEST_TOKENS: Record<string, ChargeOutcome> = {
  tok_sandbox_approved: 'approved',
  tok_sandbox_insufficient_funds: 'denied',
  tok_sandbox_authentication_denied: 'authentication_denied',
  tok_sandbox_pending: 'pending',
  tok_sandbox_processing_error: 'processing_error',
};

/** Documented test card numbers (README.md), all Luhn-valid; any other Luhn-valid number is approved. */
export const TEST_CARD_NUMBERS: Record<string, ChargeOutcome> = {
  '4111111111111111': 'approved',
  '5555555555554444': 'approved',
  '378282246310005': 'approved',
  '6363680000000007': 'approved',
  '4000000000000002': 'denied',
  '5105105105105100': 'denied',
  '4000000000003063': 'authentication_denied',
  '4000000000000101': 'pending',
  '4000000000000119': 'processing_error',
};

/** The Luhn (mod 10) check of a card number. */
export function passesLuhn(number: string): boolean {
  if (!/^[0-9]{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The reason of a card: by token, or by number (a number failing Luhn is denied, never charged). */
export function reasonOfCard(card: ChargeCard): Reason {
  if ('numberToken' in card) return REASONS[TEST_TOKENS[card.numberToken] ?? 'approved'];
  if (!passesLuhn(card.number)) return REASONS.invalid_card_number;
  return REASONS[TEST_CARD_NUMBERS[card.number] ?? 'approved'];
}

const digits = (length: number) => Array.from({ length }, () => randomInt(10)).join('');

/** Fresh acquirer identifiers of one transaction (random: only the outcome is deterministic). */
export function transactionIds(): Pick<ChargeResult, 'acquirer' | 'acquirerTransactionId' | 'transactionId' | 'terminalNsu'> {
  return {
    acquirer: SANDBOX_ACQUIRER,
    acquirerTransactionId: randomUUID().replace(/-/g, '').slice(0, 20).toUpperCase(),
    transactionId: digits(10),
    terminalNsu: digits(6),
  };
}

/** A six-digit authorization code. */
export const authorizationCode = () => digits(6);

/** Charges a card: the outcome and the acquirer's answer. */
export function charge(card: ChargeCard, now: Date = new Date()): ChargeResult {
  const reason = reasonOfCard(card);
  const brand = card.brand ?? ('number' in card ? brandOfBin(card.number.slice(0, 6)) : undefined);
  const approved = reason.outcome === 'approved';
  return {
    outcome: reason.outcome,
    authorizationCode: approved ? authorizationCode() : '',
    reasonCode: reason.reasonCode,
    reasonMessage: reason.reasonMessage,
    ...(reason.reasonDetail ? { reasonDetail: reason.reasonDetail } : {}),
    ...transactionIds(),
    ...(approved ? { authorizationTimestamp: now } : {}),
    ...(brand ? { brand } : {}),
  };
}

/**
 * The result fields of a charge settled later by a payment event (a `pending` charge approved or
 * denied by the subscription webhook): reason code and message per resulting payment status.
 */
export const SETTLEMENT_REASONS: Record<string, { reasonCode: string; reasonMessage: string; reasonDetail?: string }> = {
  approved: { reasonCode: '00', reasonMessage: 'Transaction approved' },
  authorized: { reasonCode: '00', reasonMessage: 'Transaction authorized' },
  confirmed: { reasonCode: '00', reasonMessage: 'Capture confirmed' },
  denied: { reasonCode: '05', reasonMessage: 'Do not honor', reasonDetail: 'The issuer refused the transaction' },
  expired: { reasonCode: 'EX', reasonMessage: 'Result not received in time', reasonDetail: 'No result was received in time' },
  unprocessed: { reasonCode: '96', reasonMessage: 'System malfunction', reasonDetail: 'The acquirer could not process the transaction' },
  canceled: { reasonCode: 'CN', reasonMessage: 'Transaction canceled' },
};
