// The one amount rule of the platform (MinorUnitAmount in the contract): an integer of minor units
// from 0 to 2,147,483,647 (int32), the seed's type of the checkout notification's payment.amount and
// of the subscription payment amount. Every amount the platform computes from others (a link order's
// total, a subscription charge) is checked against it before anything is stored or charged, so a
// total that the notification or a 32-bit column could not carry is a 4xx, never a 500.
import { currencyDecimals } from '@payment-platform/contract/money';
import type { Problem } from './errors.ts';

/** The largest amount of the contract (`MinorUnitAmount.maximum`), in minor units. */
export const MAX_AMOUNT = 2_147_483_647;

/** Whether a computed amount is one the contract can carry. */
export function withinAmountBound(amount: number): boolean {
  return Number.isSafeInteger(amount) && amount >= 0 && amount <= MAX_AMOUNT;
}

// The seed's money rule: the last two digits of every amount are cents, and a currency without
// cents gets two zeros appended (150 CLP is sent as 15000). Which currencies have no cents, and
// which have more decimals than two digits carry, is the contract package's money module (the
// same one the hosted pages format amounts with), so request and page never disagree.

/** Why the platform cannot take `currency` (3 or 4 decimals: a two-digit wire amount cannot carry them), or undefined. */
export function currencyProblem(currency: string): string | undefined {
  try {
    currencyDecimals(currency);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Why `amount` is not a wire amount of `currency` (a currency without cents ends in 00), or undefined. */
export function centsProblem(amount: number, currency: string): string | undefined {
  if (currencyProblem(currency) !== undefined || currencyDecimals(currency) !== 0 || amount % 100 === 0) return undefined;
  return `${currency} has no cents: its amounts end in 00 (150 ${currency} is sent as 15000; got ${amount})`;
}

/** An amount of the request body at its JSON pointer (`/products/0/amount`); undefined when absent. */
export interface AmountAt {
  pointer: string;
  value: number | undefined;
}

/** The amounts, all in `currency`, that break the money rule, each a problem at its pointer. */
export function centsProblems(currency: string, amounts: readonly AmountAt[]): Problem[] {
  return amounts.flatMap(({ pointer, value }): Problem[] => {
    const message = value === undefined ? undefined : centsProblem(value, currency);
    return message ? [{ location: 'body', pointer, message }] : [];
  });
}
