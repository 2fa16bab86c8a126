// The request bodies read before the validator: a JSON body only for an operation whose contract
// takes JSON, a URL-encoded form only for one that takes a form (the token endpoints). Any other
// request's body is left unread: the validator refuses its media type without it. Before this,
// every request to a known path had its JSON parsed, the public token endpoint's and a wrong
// method's too, and a 1 MB body of nested brackets held the event loop ~180 ms before its refusal.
// A JSON body nesting deeper than MAX_JSON_DEPTH, with an array of more than MAX_JSON_ARRAY_ITEMS, an
// object of more than MAX_JSON_OBJECT_MEMBERS, or more than MAX_JSON_VALUES members and items in all,
// is refused before it is parsed. The array bound is there for the validator: it checks every item
// of an array that already broke its `maxItems` and gathers every error (allErrors), at a cost that
// grows with the square of the items: 60 KB holding 20 000 empty products took it 11 s, long enough
// to stop the whole sandbox (attacker review, 2026-11-23). The member and value bounds are there for
// the parse itself (reviews, 2026-11-25).
import express, { type Request, type RequestHandler } from 'express';
import { bodyRefusal, measuredBody } from './body-size.ts';

/** How deep a JSON body may nest; the contract's deepest request body is under 8 levels. */
export const MAX_JSON_DEPTH = 32;
/**
 * The largest form body: the token endpoints' forms (the API's only forms) hold four fields of at
 * most 256 characters. Parsing a form costs far more than its size suggests (~240 ms of CPU for 1
 * MiB of `+`, each a space to decode), so it is not given the 1 MiB of a JSON body.
 */
export const MAX_FORM_BYTES = 16 * 1024;
/** The most items a JSON array may hold: the contract's longest request array (a sandbox plan's `floating_data`). */
export const MAX_JSON_ARRAY_ITEMS = 1200;
/**
 * The most members a JSON object may hold. The contract's widest object has 21 properties, and an
 * open one (a subscription address keeps keys of its own) holds an address. V8 builds an object of
 * more than ~128 members as a hash table: 1 MB of one object of 85,000 members held the event loop
 * ~150 ms to parse and walk (one caller at 6 requests a second kept the sandbox busy), 1 MB of
 * objects of 100 members each ~7 ms, of 128 or more ~60 ms.
 */
export const MAX_JSON_OBJECT_MEMBERS = 100;
/**
 * The most members and items a JSON body may hold in all. The contract's largest request body (a
 * sandbox plan of 1,200 floating installments of two members each) holds ~3,700. Within the bounds
 * above, 1 MB of objects each with keys of its own cost JSON.parse 0.2-1.8 s (V8 builds a new
 * layout for each new key order: re-attack review, 2026-11-25); 10,000 such members ~15 ms.
 */
export const MAX_JSON_VALUES = 10_000;

const [OPEN_OBJECT, OPEN_ARRAY, CLOSE_OBJECT, CLOSE_ARRAY, COMMA, QUOTE, BACKSLASH] = [0x7b, 0x5b, 0x7d, 0x5d, 0x2c, 0x22, 0x5c];
/** JSON's white space (RFC 8259 §2): space, tab, line feed, carriage return. */
const isJsonSpace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
const tooManyValues = () => bodyRefusal('JSON body with too many values', 'entity.too.many.values');

/**
 * body-parser's `verify`: one pass over the raw bytes (brackets and commas inside strings not
 * counted), keeping for each open bracket whether it is an array and how many commas it holds, and
 * the members and items of the whole body.
 * The bytes are read as UTF-8, the only charset a JSON body is taken in (RFC 8259 §8.1): body-parser
 * itself decodes any `utf-*` charset after this check, and in UTF-7 (`+AFs-` is `[`) or UTF-16
 * the brackets and commas are other bytes, which this pass would not count (attacker review,
 * 2026-11-24: 132 KB of UTF-7 held the event loop 10 s and stopped the sandbox). Refused as
 * body-parser refuses `latin1`: an unsupported charset.
 */
function refuseOversizedJson(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding !== 'utf-8') throw bodyRefusal(`unsupported charset "${encoding.toUpperCase()}"`, 'charset.unsupported', 415);
  // Per level: the commas seen (n commas separate n + 1 items or members), and whether it is an array.
  const commas = new Int32Array(MAX_JSON_DEPTH + 1);
  const isArray = new Uint8Array(MAX_JSON_DEPTH + 1);
  let depth = 0;
  let inString = false;
  // Members and items in all: each comma, and the first of each container (the next byte that is
  // neither white space nor its closing bracket).
  let values = 0;
  let opened = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++; // the next byte is escaped
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (isJsonSpace(byte)) continue;
    if (opened && byte !== CLOSE_OBJECT && byte !== CLOSE_ARRAY && ++values > MAX_JSON_VALUES) throw tooManyValues();
    opened = false;
    if (byte === QUOTE) inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > MAX_JSON_DEPTH) throw bodyRefusal('JSON nested too deep', 'entity.too.deep');
      commas[depth] = 0;
      isArray[depth] = byte === OPEN_ARRAY ? 1 : 0;
      opened = true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
    else if (byte === COMMA && depth > 0) {
      if (++values > MAX_JSON_VALUES) throw tooManyValues();
      const count = ++commas[depth]!;
      if (isArray[depth] && count >= MAX_JSON_ARRAY_ITEMS) throw bodyRefusal('JSON array too long', 'entity.too.many.items');
      if (!isArray[depth] && count >= MAX_JSON_OBJECT_MEMBERS) throw bodyRefusal('JSON object too wide', 'entity.too.many.members');
    }
  }
}

/**
 * A JSON number beyond a double's range (`1e400`, or 310 digits) parses as ±Infinity, which JSON
 * writes back as `null`: an open object's member (a subscription address's own keys) would be
 * stored as something other than what was sent. Refused instead, after the parse (the walk is
 * bounded by the checks above: depth, array items and object members).
 */
function refuseInfiniteNumbers(req: Request, _res: unknown, next: (error?: unknown) => void): void {
  const pending: unknown[] = [req.body];
  while (pending.length) {
    const value = pending.pop();
    if (typeof value === 'number' && !Number.isFinite(value)) return next(bodyRefusal('A JSON number beyond the range of a double', 'entity.number.range'));
    // One at a time: pushing an object's members in one call spread them as arguments, which ~130,000 overflowed.
    if (value && typeof value === 'object') for (const member of Object.values(value)) pending.push(member);
  }
  next();
}

const takes = (req: Request, type: string) => req.operation?.bodyTypes.includes(type) === true;

/**
 * The JSON and form parsers, each run only for an operation that takes its media type. Before them,
 * a body of one of these operations, multipart included (read later, by the validator's multer),
 * that does not say its length, or says it is over the limit (`multipartBytes` for multipart), is
 * refused unread: 400 and 413 (http/body-size.ts).
 */
export function bodyParsers(limit: number, multipartBytes: number): RequestHandler[] {
  const formBytes = Math.min(limit, MAX_FORM_BYTES);
  const json = express.json({ limit, verify: refuseOversizedJson });
  const form = express.urlencoded({ extended: false, limit: formBytes });
  return [
    // What a body says of its size, before anything reads it (http/body-size.ts).
    // A JSON or form body in a media type the operation does not take is never read (the parsers
    // match the type as req.is does; the validator refuses it unread). Any body of the upload is
    // measured: the validator hands it to multer on a substring of its Content-Type.
    (req, res, next) => {
      const reads = (type: string) => takes(req, type) && Boolean(req.is(type));
      const bytes = takes(req, 'multipart/form-data') ? multipartBytes : reads('application/json') ? limit : reads('application/x-www-form-urlencoded') ? formBytes : undefined;
      next(bytes === undefined ? undefined : measuredBody(req, res, bytes));
    },
    (req, res, next) => (takes(req, 'application/json') ? json(req, res, next) : next()),
    // A middleware of its own, after the parser: Express's error handling covers it, as any other.
    (req, res, next) => (takes(req, 'application/json') ? refuseInfiniteNumbers(req, res, next) : next()),
    (req, res, next) => (takes(req, 'application/x-www-form-urlencoded') ? form(req, res, next) : next()),
  ];
}
