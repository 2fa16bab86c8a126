// The hosted checkout's form rules as functions (the pages' HTTP suites go through them too): the
// card of a form post, when 3DS runs, and the payment a form post chooses.
import { describe, expect, it } from 'vitest';
import { cardOfForm } from '../../server/hosted-checkout/card.ts';
import { chosenPayment } from '../../server/hosted-checkout/form.ts';
import { PageError } from '../../server/hosted-checkout/page-error.ts';
import { threeDsRuns } from '../../server/hosted-checkout/payment-methods.ts';
import type { PaymentMethods } from '../../server/payment-link/payment-methods.ts';
import { APPROVED, cardForm } from './support/checkout.ts';

const NOW = new Date('2026-06-15T12:00:00Z');
const AMEX = '378282246310005';

describe('cardOfForm', () => {
  it('reads the card of a form, spaces and dashes in the number ignored, with its brand', () => {
    expect(cardOfForm(cardForm('4111 1111-1111 1111'), NOW)).toEqual({
      card: { number: APPROVED, holder: 'MARIA SILVA', expirationMonth: '12', expirationYear: '30', securityCode: '123', brand: 'Visa' },
    });
  });

  it.each([
    ['a number that fails the Luhn check', { card_number: '4111111111111112' }, 'The card number is not valid: check the digits.'],
    ['a name of one letter', { cardholder_name: 'M' }, 'Write the name as it is on the card.'],
    ['an expiry not MM/YY', { expiry: '2030-12' }, 'The expiry date must be MM/YY.'],
    ['a month 13', { expiry: '13/30' }, 'The expiry date must be MM/YY.'],
    ['a card past its month', { expiry: '05/26' }, 'The card has expired.'],
    ['a security code of 4 digits on a Visa', { security_code: '1234' }, 'The security code has 3 digits.'],
  ])('says what to fix for %s', (_what, change, problem) => {
    expect(cardOfForm({ ...cardForm(), ...change }, NOW)).toEqual({ problem });
  });

  it('takes a card until the end of its expiry month', () => {
    expect(cardOfForm(cardForm(APPROVED, { expiry: '06/26' }), NOW)).toHaveProperty('card');
  });

  it('asks an Amex card for 4 security digits', () => {
    expect(cardOfForm(cardForm(AMEX, { security_code: '123' }), NOW)).toEqual({ problem: 'The security code has 4 digits.' });
    expect(cardOfForm(cardForm(AMEX, { security_code: '1234' }), NOW)).toMatchObject({ card: { brand: 'Amex', securityCode: '1234' } });
  });
});

describe('threeDsRuns', () => {
  it('runs only when the seller and the brand have it on and the request did not set it false', () => {
    expect(threeDsRuns(true, { threeds: true }, undefined)).toBe(true);
    expect(threeDsRuns(true, { threeds: true }, true)).toBe(true);
    expect(threeDsRuns(true, { threeds: true }, false)).toBe(false);
    expect(threeDsRuns(false, { threeds: true }, true)).toBe(false);
    expect(threeDsRuns(undefined, { threeds: true }, true)).toBe(false);
    expect(threeDsRuns(true, { threeds: false }, true)).toBe(false);
    expect(threeDsRuns(true, {}, true)).toBe(false);
    expect(threeDsRuns(true, undefined, true)).toBe(false);
  });
});

describe('chosenPayment', () => {
  const visa = {
    enabled: true,
    brand: 'VISA',
    threeds: true,
    supported_installments: [{ schema: 'issuer', installments: [2, 3], installments_with_interest: [3] }],
  };
  const payments = {
    credit: { enabled: true, brands: [visa] },
    debit: { enabled: true, brands: [{ enabled: true, brand: 'MASTERCARD' }] },
    google_pay: { enabled: true },
    apple_pay: { enabled: false },
  } as unknown as PaymentMethods;
  const choose = (form: Record<string, unknown>, p: Partial<Parameters<typeof chosenPayment>[1]> = {}) =>
    chosenPayment(form, { country: 'BR', payments, sellerThreeds: true, now: NOW, ...p });
  const refusal = (f: () => unknown) => {
    try {
      f();
    } catch (error) {
      return error instanceof PageError ? { status: error.status, kind: error.kind, message: error.message } : error;
    }
    throw new Error('no refusal');
  };

  it('pays a typed credit card in full, 3DS as the seller, brand and request say', () => {
    const chosen = choose(cardForm());
    expect(chosen).toMatchObject({ method: 'credit', notifiedMethod: 'credit', card: { brand: 'Visa' }, threeDs: true });
    expect(chosen.installment).toBeUndefined();
    expect(choose(cardForm(), { requested3ds: false }).threeDs).toBe(false);
    expect(choose(cardForm(), { sellerThreeds: false }).threeDs).toBe(false);
  });

  it('takes an installment count the brand offers, with its type', () => {
    expect(choose(cardForm(APPROVED, { installments: '3' })).installment).toEqual({ number: 3, type: 'with_interest', schema: 'issuer' });
    expect(refusal(() => choose(cardForm(APPROVED, { installments: '4' })))).toEqual({
      status: 422,
      kind: 'form',
      message: 'Visa cards cannot be paid in 4 installments here.',
    });
  });

  it('ignores installments for a card verification', () => {
    expect(choose(cardForm(APPROVED, { installments: '4' }), { flow: 'card_verification' }).installment).toBeUndefined();
  });

  it('pays a wallet as credit, without a card and without 3DS', () => {
    expect(choose({ method: 'google_pay' })).toEqual({ method: 'google_pay', notifiedMethod: 'credit', threeDs: false });
  });

  it('refuses a method the page does not offer', () => {
    const notOffered = { status: 422, kind: 'form', message: 'Choose one of the payment methods offered.' };
    expect(refusal(() => choose({ method: 'apple_pay' }))).toEqual(notOffered); // disabled
    expect(refusal(() => choose({ method: 'google_pay' }, { country: 'MX' }))).toEqual(notOffered); // not in the country
    expect(refusal(() => choose({ method: 'google_pay' }, { flow: 'card_verification' }))).toEqual(notOffered); // cards only
    expect(refusal(() => choose({ method: 'bankslip' }))).toEqual(notOffered);
  });

  it('refuses a card the form gets wrong, with the sentence of cardOfForm', () => {
    expect(refusal(() => choose(cardForm('4111111111111112')))).toEqual({ status: 422, kind: 'form', message: 'The card number is not valid: check the digits.' });
  });

  it('refuses a brand the method does not accept', () => {
    expect(refusal(() => choose(cardForm(APPROVED, { method: 'debit' })))).toEqual({
      status: 422,
      kind: 'form',
      message: 'This debit card (Visa) is not accepted here.',
    });
  });
});
