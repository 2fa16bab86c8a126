// The hostile alphabet of the contract fuzzer: text an attacker sends (NUL and other C0 controls,
// lone surrogates, bidirectional and zero-width marks, very long strings), numbers at and just past
// the schema's bounds, real ids slightly changed, and values for paths and query strings that no
// encoder would produce (invalid UTF-8, bare `%`, encoded separators).
import fc from 'fast-check';

/** Characters that break naive storage, logging or display. */
export const HOSTILE_CHARS = [
  '\u0000', '\u0001', '\u0007', '\b', '\t', '\n', '\r', '\u000b', '\u001b', '\u001f', '\u007f', '\u0085',
  '\ud800', '\udbff', '\udc00', '\udfff', // lone surrogates
  '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069', '\u061c', // direction marks and overrides
  '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', // zero-width
  '\u2028', '\u2029', '\ufffd', '\uffff', '\u0301', '\ud83d\ude00', '\u{10ffff}',
];

const hostileChar = fc.constantFrom(...HOSTILE_CHARS);

/** Text carrying hostile characters: alone, inside ordinary text, in runs, or very long. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  hostileChar,
  fc.tuple(fc.string({ maxLength: 8 }), hostileChar, fc.string({ maxLength: 8 })).map(([a, c, b]) => `${a}${c}${b}`),
  fc.string({ unit: fc.oneof(hostileChar, fc.constantFrom('a', ' ', '/', '%', '"', '\\')), minLength: 1, maxLength: 24 }),
  fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 24 }),
  fc.tuple(fc.constantFrom('a', '\u202e', '\u200b', 'é', '\ud83d\ude00'), fc.integer({ min: 1_000, max: 70_000 })).map(([c, n]) => c.repeat(n)),
  fc.constantFrom('%00', '\\u0000', '${jndi:x}', '{{7*7}}', "'; DROP TABLE sellers; --", '<script>alert(1)</script>', '../'.repeat(8) + 'etc/passwd'),
);

const INTEGER_EDGES = [0, -1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), Number.MAX_VALUE, 1e308];

/** The largest and smallest values a number schema allows, and those just beyond. */
export function boundaryNumbers(schema: { type?: unknown; minimum?: number; maximum?: number; exclusiveMinimum?: number; exclusiveMaximum?: number; multipleOf?: number }): fc.Arbitrary<number> {
  const step = schema.type === 'integer' ? 1 : (schema.multipleOf ?? 0.01);
  const edges = [...INTEGER_EDGES, 0.5, -0.0, 1e-7];
  if (schema.maximum !== undefined) edges.push(schema.maximum, schema.maximum + step);
  if (schema.minimum !== undefined) edges.push(schema.minimum, schema.minimum - step);
  if (schema.exclusiveMaximum !== undefined) edges.push(schema.exclusiveMaximum, schema.exclusiveMaximum - step);
  if (schema.exclusiveMinimum !== undefined) edges.push(schema.exclusiveMinimum, schema.exclusiveMinimum + step);
  return fc.constantFrom(...new Set(edges));
}

/** A real value (an id) changed a little: case, whitespace, one character, a hostile suffix. */
export const mutatedId = (id: string): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(id.toUpperCase(), ` ${id}`, `${id} `, id.slice(0, -1), `${id}0`, `${id}\u0000`, `${id}\u200b`, [...id].reverse().join(''), `${id},${id}`),
    fc.tuple(fc.nat({ max: Math.max(id.length - 1, 0) }), hostileChar).map(([at, c]) => id.slice(0, at) + c + id.slice(at + 1)),
  );

/**
 * A value as it goes into a path segment or a query string: percent-encoded as UTF-8, or spelled
 * raw (bytes no encoder writes: invalid UTF-8, an encoded lone surrogate, an overlong slash).
 */
export const hostileUrlValue: fc.Arbitrary<string> = fc.oneof(
  // Long, but within what a server reads as a request head (over 16 KiB of head Node refuses with a
  // 431 before any application code); a cut may end inside an escape, which is hostile too.
  hostileText.map((text) => encodeUrlValue(text.slice(0, 2_000)).slice(0, 2_000)),
  fc.constantFrom('%00', '%ED%A0%80', '%C0%AF', '%FF', '%E2%80%AE', '%', '%zz', '%2F', '%5C', '%2e%2e', '%20', '%0d%0a', '%25', '+', 'a%00b', '%u0000'),
);

/** UTF-8 percent-encoding that also takes lone surrogates (as U+FFFD, the way a browser sends them). */
export function encodeUrlValue(value: string): string {
  return [...Buffer.from(value, 'utf8')].map((b) => (UNRESERVED.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
