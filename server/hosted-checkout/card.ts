// The card typed on a hosted page: checked here as the page's script checks it (the script is a
// convenience; the server decides). The number and security code live only in this request.
import { passesLuhn } from '../acquirer/index.ts';
import { brandOfBin, type CardBrand } from '../acquirer/brands.ts';

export interface TypedCard {
  number: string;
  holder: string;
  expirationMonth: string;
  expirationYear: string;
  securityCode: string;
  brand: CardBrand | undefined;
}

/** What may be kept of a card: bin and last four, never more. */
export const binOf = (card: TypedCard) => card.number.slice(0, 6);
export const lastFourOf = (card: TypedCard) => card.number.slice(-4);

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/**
 * The card of a form post, or the sentence that tells the customer what to fix. Spaces and dashes
 * in the number are ignored; the expiry is `MM/YY`; Amex asks 4 security digits, others 3.
 */
export function cardOfForm(form: Record<string, unknown>, now: Date): { card: TypedCard } | { problem: string } {
  const number = text(form.card_number).replace(/[\s-]/g, '');
  if (!passesLuhn(number)) return { problem: 'The card number is not valid: check the digits.' };
  const holder = text(form.cardholder_name);
  if (holder.length < 2 || holder.length > 60) return { problem: 'Write the name as it is on the card.' };
  const expiry = /^(0[1-9]|1[0-2])\s*\/\s*([0-9]{2})$/.exec(text(form.expiry));
  if (!expiry) return { problem: 'The expiry date must be MM/YY.' };
  const [, month, year] = expiry as unknown as [string, string, string];
  const endOfMonth = Date.UTC(2000 + Number(year), Number(month), 1);
  if (endOfMonth <= now.getTime()) return { problem: 'The card has expired.' };
  const brand = brandOfBin(number.slice(0, 6));
  const securityCode = text(form.security_code);
  const digits = brand === 'Amex' ? 4 : 3;
  if (!new RegExp(`^[0-9]{${digits}}$`).test(securityCode)) return { problem: `The security code has ${digits} digits.` };
  return { card: { number, holder, expirationMonth: month, expirationYear: year, securityCode, brand } };
}
