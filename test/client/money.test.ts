// The wire rule of money: the last two digits are cents, and a currency without cents (ISO 4217
// minor unit 0, CLP among the seed's currencies) gets two zeros appended.
import { describe, expect, it } from 'vitest';
import { currencyDecimals, formatMoney, fromMinorUnits, toMinorUnits } from '../../contract/money.ts';

describe('toMinorUnits', () => {
  it.each([
    [150, 'CLP', 15000],
    ['150', 'CLP', 15000],
    [19.99, 'BRL', 1999],
    [0.1 + 0.2, 'BRL', null],
    [1.005, 'MXN', null],
    ['104.90', 'BRL', 10490],
    [1500.5, 'COP', 150050],
    [1500, 'UYU', 150000],
    [-12.5, 'EUR', -1250],
    [0, 'USD', 0],
    ['-0.00', 'USD', 0],
  ] as const)('%s %s is sent as %s', (amount, currency, minor) => {
    if (minor === null) expect(() => toMinorUnits(amount, currency)).toThrow(RangeError);
    else expect(toMinorUnits(amount, currency)).toBe(minor);
  });

  it('never drifts on float input (19.99 * 100 is 1998.9999999999998)', () => {
    for (let cents = 0; cents < 100_000; cents += 7) expect(toMinorUnits(cents / 100, 'BRL')).toBe(cents);
  });

  it('refuses cents for a currency without cents, and too many decimals', () => {
    expect(() => toMinorUnits(150.5, 'CLP')).toThrow('CLP has no cents (got 150.5)');
    expect(() => toMinorUnits('19.999', 'BRL')).toThrow('BRL amounts have at most 2 decimals (got 19.999)');
  });

  it('refuses what is not a plain decimal amount or an ISO currency code', () => {
    for (const amount of [Number.NaN, Infinity, 1e21, '1,50', '', ' 1.2.3'] as const) expect(() => toMinorUnits(amount, 'BRL')).toThrow(RangeError);
    expect(() => toMinorUnits(1, 'brl')).toThrow('ISO 4217');
    expect(() => toMinorUnits(1, 'KWD')).toThrow('more than two decimals');
  });
});

describe('fromMinorUnits', () => {
  it.each([
    [15000, 'CLP', 150],
    [1999, 'BRL', 19.99],
    [150050, 'COP', 1500.5],
    [-1250, 'EUR', -12.5],
  ] as const)('%s %s is %s', (minor, currency, amount) => {
    expect(fromMinorUnits(minor, currency)).toBe(amount);
    expect(toMinorUnits(fromMinorUnits(minor, currency), currency)).toBe(minor);
  });

  it('refuses cents on a currency without cents and non-integers', () => {
    expect(() => fromMinorUnits(15050, 'CLP')).toThrow('CLP has no cents: its wire amounts end in 00 (got 15050)');
    expect(() => fromMinorUnits(19.5, 'BRL')).toThrow(RangeError);
  });
});

describe('currencyDecimals', () => {
  it('follows ISO 4217: CLP has none, the other currencies of the seed have two', () => {
    expect(['BRL', 'ARS', 'CLP', 'MXN', 'EUR', 'UYU', 'USD', 'COP', 'PEN'].map((c) => [c, currencyDecimals(c)])).toEqual([
      ['BRL', 2], ['ARS', 2], ['CLP', 0], ['MXN', 2], ['EUR', 2], ['UYU', 2], ['USD', 2], ['COP', 2], ['PEN', 2],
    ]);
  });
});

describe('formatMoney', () => {
  // Intl separates the symbol with a no-break space in some locales.
  const plain = (s: string) => s.replace(/\s/g, ' ');

  it.each([
    [1999, 'BRL', 'pt-BR', 'R$ 19,99'],
    [15000, 'CLP', 'es-CL', '$150'],
    [150000000, 'CLP', 'es-CL', '$1.500.000'],
    [150050, 'COP', 'es-CO', '$ 1.500,50'],
    [10490, 'MXN', 'es-MX', '$104.90'],
    [-1250, 'EUR', 'es-ES', '-12,50 €'],
    [2500, 'UYU', 'es-UY', '$ 25,00'],
  ] as const)('%s %s in %s is %s', (minor, currency, locale, text) => {
    expect(plain(formatMoney(minor, currency, locale))).toBe(text);
  });

  it('refuses a wire amount with cents for a currency without cents', () => {
    expect(() => formatMoney(15050, 'CLP', 'es-CL')).toThrow(RangeError);
  });
});
