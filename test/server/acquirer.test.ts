// The sandbox acquirer: documented test cards (tokens and PANs) decide outcomes deterministically,
// the README documents exactly the cards of the code, and the bin table follows the contract.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { brandOfBin } from '../../server/acquirer/brands.ts';
import { charge, passesLuhn, REASONS, reasonOfCard, TEST_CARD_NUMBERS, TEST_TOKENS } from '../../server/acquirer/index.ts';

const README = readFileSync(new URL('../../server/acquirer/README.md', import.meta.url), 'utf8');

describe('test cards', () => {
  it.each(Object.entries(TEST_TOKENS))('token %s is %s, every time', (token, outcome) => {
    expect(charge({ numberToken: token, brand: 'Visa' }).outcome).toBe(outcome);
    expect(charge({ numberToken: token, brand: 'Visa' }).outcome).toBe(outcome);
  });

  it.each(Object.entries(TEST_CARD_NUMBERS))('card number %s is Luhn-valid and %s', (number, outcome) => {
    expect(passesLuhn(number)).toBe(true);
    expect(charge({ number }).outcome).toBe(outcome);
  });

  it('approves an unknown token and an unknown Luhn-valid number', () => {
    expect(charge({ numberToken: 'ntk_8f3a2c1e9b7d4f60a5e2c3b1d9f7e8a6' }).outcome).toBe('approved');
    expect(charge({ number: '4242424242424242' }).outcome).toBe('approved');
  });

  it('denies a number that fails the Luhn check with reason 14', () => {
    expect(reasonOfCard({ number: '4111111111111112' })).toEqual(REASONS.invalid_card_number);
    expect(charge({ number: '4111111111111112' })).toMatchObject({ outcome: 'denied', reasonCode: '14', authorizationCode: '' });
  });

  it('answers every field the subscription payment transaction needs', () => {
    const now = new Date('2026-03-20T14:05:43Z');
    const approved = charge({ numberToken: 'tok_sandbox_approved', brand: 'Mastercard' }, now);
    expect(approved).toEqual({
      outcome: 'approved',
      authorizationCode: expect.stringMatching(/^\d{6}$/),
      reasonCode: '00',
      reasonMessage: 'Transaction approved',
      acquirer: 'SANDBOX',
      acquirerTransactionId: expect.stringMatching(/^[0-9A-F]{20}$/),
      transactionId: expect.stringMatching(/^\d{10}$/),
      terminalNsu: expect.stringMatching(/^\d{6}$/),
      authorizationTimestamp: now,
      brand: 'Mastercard',
    });
    expect(charge({ numberToken: 'tok_sandbox_insufficient_funds' })).toMatchObject({
      outcome: 'denied',
      authorizationCode: '',
      reasonCode: '51',
      reasonMessage: 'Insufficient funds',
      reasonDetail: 'The issuer refused the transaction for lack of funds',
    });
    expect(charge({ number: '5555555555554444' }).brand).toBe('Mastercard');
  });

  it('documents every test card and every reason of the code in its README', () => {
    for (const token of Object.keys(TEST_TOKENS)) expect(README).toContain(`\`${token}\``);
    for (const number of Object.keys(TEST_CARD_NUMBERS)) expect(README).toContain(`\`${number}\``);
    for (const reason of Object.values(REASONS)) expect(README).toContain(`| \`${reason.reasonCode}\` | ${reason.reasonMessage} |`);
  });
});

describe('brandOfBin (the contract bin table, in its order)', () => {
  it.each([
    ['401178', 'Elo'],
    ['506700', 'Elo'],
    ['650720', 'Elo'],
    ['636368', 'Elo'],
    ['606282', 'Hipercard'],
    ['384100', 'Hipercard'],
    ['341234', 'Amex'],
    ['371234', 'Amex'],
    ['549167', 'Mastercard'],
    ['222100', 'Mastercard'],
    ['272099', 'Mastercard'],
    ['411111', 'Visa'],
    ['501234', 'Maestro'],
    ['670000', 'Maestro'],
  ])('%s is %s', (bin, brand) => {
    expect(brandOfBin(bin)).toBe(brand);
  });

  it.each(['300000', '100000', '272100', '12345', 'abcdef'])('%s has no brand', (bin) => {
    expect(brandOfBin(bin)).toBeUndefined();
  });
});
