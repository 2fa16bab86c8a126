// Money on the wire is an integer whose last two digits are cents, for every currency: a currency
// without cents gets two zeros appended (150 CLP is sent as 15000). These helpers convert between
// that wire value and an amount in the currency's units, exactly (decimal text, never float
// arithmetic), and format it for people. Shared by the client, merchants and the reference server:
// `make generate` compiles it into the contract package (`@payment-platform/contract/money`).
//
// Which currencies are "without cents" is the package's decision (the seed gives only the rule):
// those whose ISO 4217 minor unit is 0. Of the seed's currencies that is CLP alone; COP and UYU have
// a minor unit of 2 in ISO 4217, so they keep cents on the wire even where prices are usually whole.
// Currencies with 3 or 4 decimals (KWD, CLF, ...) cannot be carried by a two-digit wire value and
// are refused.

/** Digits after the units in every wire amount (`MinorUnitAmount` of the contract). */
export const WIRE_DECIMALS = 2;

/** ISO 4217 currencies with minor unit 0: their wire amounts always end in `00`. */
export const CURRENCIES_WITHOUT_CENTS: ReadonlySet<string> = new Set([
  'BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF',
]);

/** ISO 4217 currencies with 3 or 4 decimals, which the two-digit wire value cannot carry. */
const CURRENCIES_WITH_MORE_DECIMALS: ReadonlySet<string> = new Set(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND', 'CLF', 'UYW']);

/** Decimals a real amount of the currency may have: 0 (without cents) or 2. */
export function currencyDecimals(currency: string): 0 | 2 {
  if (!/^[A-Z]{3}$/.test(currency)) throw new RangeError(`currency must be an ISO 4217 alpha-3 code in upper case (got ${JSON.stringify(currency)})`);
  if (CURRENCIES_WITH_MORE_DECIMALS.has(currency)) {
    throw new RangeError(`${currency} has more than two decimals, which the platform's amounts cannot carry`);
  }
  return CURRENCIES_WITHOUT_CENTS.has(currency) ? 0 : 2;
}

/**
 * Wire value of an amount in the currency's units: `toMinorUnits(19.99, 'BRL')` is 1999,
 * `toMinorUnits(150, 'CLP')` is 15000. A string (`'19.99'`) is taken as exact decimal text.
 * Throws a RangeError for more decimals than the currency has (`150.5` CLP, `19.999` BRL).
 */
export function toMinorUnits(amount: number | string, currency: string): number {
  const decimals = currencyDecimals(currency);
  if (typeof amount === 'number' && !Number.isFinite(amount)) throw new RangeError(`amount must be finite (got ${amount})`);
  // String(19.99) is "19.99": the shortest text that reads back as the same number.
  const text = typeof amount === 'number' ? String(amount) : amount.trim();
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new RangeError(`amount must be a plain decimal number (got ${JSON.stringify(amount)})`);
  const [, sign, units, rawFraction = ''] = match;
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > decimals) {
    throw new RangeError(
      decimals === 0 ? `${currency} has no cents (got ${text})` : `${currency} amounts have at most ${decimals} decimals (got ${text})`,
    );
  }
  const minor = Number(`${sign}${units}${fraction.padEnd(WIRE_DECIMALS, '0')}`);
  if (!Number.isSafeInteger(minor)) throw new RangeError(`amount ${text} is too large`);
  return minor === 0 ? 0 : minor;
}

/**
 * Amount in the currency's units from its wire value: `fromMinorUnits(1999, 'BRL')` is 19.99,
 * `fromMinorUnits(15000, 'CLP')` is 150. For display and input only: do arithmetic on wire values.
 * Throws a RangeError when a currency without cents is given cents (`15050` CLP).
 */
export function fromMinorUnits(minor: number, currency: string): number {
  const decimals = currencyDecimals(currency);
  if (!Number.isSafeInteger(minor)) throw new RangeError(`a wire amount is an integer (got ${minor})`);
  if (decimals === 0 && minor % 100 !== 0) {
    throw new RangeError(`${currency} has no cents: its wire amounts end in 00 (got ${minor})`);
  }
  return minor / 10 ** WIRE_DECIMALS;
}

const formatters = new Map<string, Intl.NumberFormat>();

/**
 * A wire amount written for people: `formatMoney(1999, 'BRL', 'pt-BR')` is `R$ 19,99`,
 * `formatMoney(15000, 'CLP', 'es-CL')` is `$150`. Shows the ISO 4217 decimals decided above (COP
 * with two, although some locales' data shows none).
 */
export function formatMoney(minor: number, currency: string, locale?: string | string[]): string {
  const decimals = currencyDecimals(currency);
  const key = `${String(locale)}|${currency}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: decimals, maximumFractionDigits: decimals });
    formatters.set(key, formatter);
  }
  return formatter.format(fromMinorUnits(minor, currency));
}
