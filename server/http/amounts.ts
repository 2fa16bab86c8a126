// The one amount rule of the platform (MinorUnitAmount in the contract): an integer of minor units
// from 0 to 2,147,483,647 (int32), the seed's type of the checkout notification's payment.amount and
// of the subscription payment amount. Every amount the platform computes from others (a link order's
// total, a subscription charge) is checked against it before anything is stored or charged, so a
// total that the notification or a 32-bit column could not carry is a 4xx, never a 500.

/** The largest amount of the contract (`MinorUnitAmount.maximum`), in minor units. */
export const MAX_AMOUNT = 2_147_483_647;

/** Whether a computed amount is one the contract can carry. */
export function withinAmountBound(amount: number): boolean {
  return Number.isSafeInteger(amount) && amount >= 0 && amount <= MAX_AMOUNT;
}
