// The contract's `date` and `date-time` strings: real calendar dates and times (ajv-formats' full
// formats, not the validator's default fast ones, whose patterns let `2027-19-39`, `2027-02-30` or
// `T29:00` through to a 500, or `2026-02-31` in as 3 March), an instant JavaScript can read (no
// leap second `:60`, no hour-only offset), within the years the platform can store and read back:
// 1000 to 9999. PostgreSQL refuses year 0, JavaScript reads years 0-99 as 1900-1999 (a test clock
// set in 0049 came back in 2049), and an instant past 9999 cannot be written back as the contract's
// date-time (`+010000-…`). Anything else is a malformed date: the area's 400.
// Given to the validator as custom formats, so requests and responses share the rule.
import { validatorRequire } from './route-lookup-cache.ts';

interface FormatDefinition {
  type: 'string';
  validate: (value: string) => boolean;
}

type Check = RegExp | ((value: string) => boolean);
const fullFormats = (validatorRequire()('ajv-formats/dist/formats') as { fullFormats: Record<string, { validate: Check }> }).fullFormats;
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

export const PLATFORM_DATE_FORMATS: Record<'date' | 'date-time', FormatDefinition> = {
  date: { type: 'string', validate: (value) => passes(fullFormats.date!.validate, value) && withinPlatformDates(value) },
  'date-time': { type: 'string', validate: (value) => passes(fullFormats['date-time']!.validate, value) && withinPlatformInstants(value) },
};
