// The contract's formats where the validator's defaults would not do, in one place for requests,
// responses, the hosted pages' forms and the contract package's compiled checks.
//
// `date` and `date-time`: real calendar dates and times (ajv-formats' full formats, not the validator's
// default fast ones, whose patterns let `2027-19-39`, `2027-02-30` or `T29:00` through to a 500, or
// `2026-02-31` in as 3 March), an instant JavaScript can read (no leap second `:60`, no hour-only
// offset), within the years the platform can store and read back: 1000 to 9999. PostgreSQL refuses
// year 0, JavaScript reads years 0-99 as 1900-1999 (a test clock set in 0049 came back in 2049), and
// an instant past 9999 cannot be written back as the contract's date-time (`+010000-…`). Anything else
// is a malformed date: the area's 400.
//
// `email`: ajv-formats' fast pattern, the validator's own, which the compiled checkout notification
// check uses too (scripts/contract/validators.ts): an address the API accepts is one the notification
// carries and the client's receiver accepts, and the hosted page's form asks the same of its buyer.
import { validatorRequire } from './route-lookup-cache.ts';

interface FormatDefinition {
  type: 'string';
  validate: (value: string) => boolean;
}

type Check = RegExp | ((value: string) => boolean);
const { fullFormats, fastFormats } = validatorRequire()('ajv-formats/dist/formats') as Record<'fullFormats' | 'fastFormats', Record<string, Check | { validate: Check }>>;
const checkOf = (format: Check | { validate: Check } | undefined): Check => (format instanceof RegExp || typeof format === 'function' ? format : format!.validate);
const passes = (check: Check, value: string) => (typeof check === 'function' ? check(value) : check.test(value));

export const FIRST_DATE = '1000-01-01';
export const LAST_DATE = '9999-12-31';
const EARLIEST = Date.parse(`${FIRST_DATE}T00:00:00Z`);
const LATEST = Date.parse(`${LAST_DATE}T23:59:59.999Z`);

/** A date (`YYYY-MM-DD`, four-digit year: `10000-01-01` sorts before `9999-…` as text) the platform accepts. */
export function withinPlatformDates(date: string): boolean {
  return date.length === FIRST_DATE.length && date >= FIRST_DATE && date <= LAST_DATE;
}

/** The instant a date-time names, in UTC, is one JavaScript reads and within the same years. */
function withinPlatformInstants(dateTime: string): boolean {
  const instant = Date.parse(dateTime);
  return !Number.isNaN(instant) && instant >= EARLIEST && instant <= LATEST;
}

/**
 * The longest date-time looked at: the contract's are at most 40 characters (`maxLength`, refused
 * anyway beyond), and a date at most 10. ajv-formats' full date-time check splits its value on
 * every `t` and white space first: 1 MiB of spaces built ~1 M strings, ~0.3 s of the event loop per
 * request, and a burst of 48 cost the sandbox its data directory's lock (re-attack review, 2026-11-25).
 */
const LONGEST_DATE_TIME = 64;

export const PLATFORM_DATE_FORMATS: Record<'date' | 'date-time', FormatDefinition> = {
  date: { type: 'string', validate: (value) => withinPlatformDates(value) && passes(checkOf(fullFormats.date), value) },
  'date-time': {
    type: 'string',
    validate: (value) => value.length <= LONGEST_DATE_TIME && passes(checkOf(fullFormats['date-time']), value) && withinPlatformInstants(value),
  },
};

/** An e-mail address as the contract's `format: email` reads it (ajv-formats' fast pattern). */
export const EMAIL_PATTERN = checkOf(fastFormats.email) as RegExp;
export const isEmail = (value: string) => EMAIL_PATTERN.test(value);

/** The formats given to the validator. */
export const PLATFORM_FORMATS: Record<'date' | 'date-time' | 'email', FormatDefinition> = {
  ...PLATFORM_DATE_FORMATS,
  email: { type: 'string', validate: isEmail },
};
