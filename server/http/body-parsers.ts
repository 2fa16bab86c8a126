// The request bodies read before the validator: a JSON body only for an operation whose contract
// takes JSON, a URL-encoded form only for one that takes a form (the token endpoints). Any other
// request's body is left unread: the validator refuses its media type without it. Before this,
// every request to a known path had its JSON parsed, the public token endpoint's and a wrong
// method's too, and a 1 MB body of nested brackets held the event loop ~180 ms before its refusal.
// A JSON body nesting deeper than MAX_JSON_DEPTH, or with an array of more than MAX_JSON_ARRAY_ITEMS,
// is refused before it is parsed. The array bound is there for the validator: it checks every item
// of an array that already broke its `maxItems` and gathers every error (allErrors), at a cost that
// grows with the square of the items: 60 KB holding 20 000 empty products took it 11 s, long
// enough to stop the whole sandbox (attacker review, 2026-11-23).
import express, { type Request, type RequestHandler } from 'express';

/** How deep a JSON body may nest; the contract's deepest request body is under 8 levels. */
export const MAX_JSON_DEPTH = 32;
/** The most items a JSON array may hold: the contract's longest request array (a sandbox plan's `floating_data`). */
export const MAX_JSON_ARRAY_ITEMS = 1200;

const [OPEN_OBJECT, OPEN_ARRAY, CLOSE_OBJECT, CLOSE_ARRAY, COMMA, QUOTE, BACKSLASH] = [0x7b, 0x5b, 0x7d, 0x5d, 0x2c, 0x22, 0x5c];

// An http-error as body-parser raises them (400, shown to the client); error-normalising.ts words it.
const refusal = (message: string, type: string) => Object.assign(new Error(message), { status: 400, expose: true, type });

/**
 * body-parser's `verify`: one pass over the raw bytes (brackets and commas inside strings not
 * counted), keeping for each open bracket whether it is an array and how many commas it holds.
 * The bytes are read as UTF-8, the only charset a JSON body is taken in (RFC 8259 §8.1): body-parser
 * itself decodes any `utf-*` charset after this check, and in UTF-7 (`+AFs-` is `[`) or UTF-16
 * the brackets and commas are other bytes, which this pass would not count (attacker review,
 * 2026-11-24: 132 KB of UTF-7 held the event loop 10 s and stopped the sandbox). Refused as
 * body-parser refuses `latin1`: an unsupported charset.
 */
function refuseOversizedJson(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding !== 'utf-8') throw Object.assign(refusal(`unsupported charset "${encoding.toUpperCase()}"`, 'charset.unsupported'), { status: 415 });
  const commas = new Int32Array(MAX_JSON_DEPTH + 1); // per level: commas seen, or -1 for an object
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++; // the next byte is escaped
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > MAX_JSON_DEPTH) throw refusal('JSON nested too deep', 'entity.too.deep');
      commas[depth] = byte === OPEN_ARRAY ? 0 : -1;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
    else if (byte === COMMA && depth > 0 && commas[depth]! >= 0 && ++commas[depth]! >= MAX_JSON_ARRAY_ITEMS) {
      throw refusal('JSON array too long', 'entity.too.many.items');
    }
  }
}

/**
 * A JSON number beyond a double's range (`1e400`, or 310 digits) parses as ±Infinity, which JSON
 * writes back as `null`: an open object's member (a subscription address's own keys) would be
 * stored as something other than what was sent. Refused instead, after the parse (the walk is
 * bounded by the checks above: depth and array length).
 */
function refuseInfiniteNumbers(req: Request, _res: unknown, next: (error?: unknown) => void): void {
  const pending: unknown[] = [req.body];
  while (pending.length) {
    const value = pending.pop();
    if (typeof value === 'number' && !Number.isFinite(value)) return next(refusal('A JSON number beyond the range of a double', 'entity.number.range'));
    // One at a time: an object may hold ~130,000 members in a 1 MB body, more than a call's arguments may be.
    if (value && typeof value === 'object') for (const member of Object.values(value)) pending.push(member);
  }
  next();
}

const takes = (req: Request, type: string) => req.operation?.bodyTypes.includes(type) === true;

/**
 * The JSON and form parsers, each run only for an operation that takes its media type; a multipart
 * body (read later, by the validator's multer) that says it holds more than `multipartBytes` is
 * refused before it is read, as an oversized JSON body is (413). So is one that does not say how
 * much it holds (`Transfer-Encoding: chunked`, no `Content-Length`), with a 400: multer reads such a
 * body to its end, and the file parts after the first are read and dropped whatever their size, so
 * one request kept a CPU busy for the whole request timeout (attacker review, 2026-11-24).
 */
export function bodyParsers(limit: number, multipartBytes: number): RequestHandler[] {
  const json = express.json({ limit, verify: refuseOversizedJson });
  const form = express.urlencoded({ extended: false, limit });
  const tooLarge = () => Object.assign(refusal('request entity too large', 'entity.too.large'), { status: 413 });
  return [
    // What a body says of its size, before anything reads it. A JSON or form body over the limit:
    // body-parser itself reads such a body to its end before it answers 413 (it drains, then errors),
    // and the public token endpoint read 10 GB for one request so (re-attack review, 2026-11-24); a
    // chunked one is still read up to the limit by the parser, then drained up to the request timeout.
    (req, _res, next) => {
      const length = req.get('content-length');
      if (takes(req, 'multipart/form-data')) {
        if (length === undefined && req.get('transfer-encoding') !== undefined) return next(refusal('length required', 'length.required'));
        return next(Number(length) > multipartBytes ? tooLarge() : undefined);
      }
      const parsed = takes(req, 'application/json') || takes(req, 'application/x-www-form-urlencoded');
      if (!parsed) return next();
      // A compressed body is counted by the parser as it inflates; sent chunked, the bytes after
      // its limit would be read and dropped as above, and counting the compressed bytes here would
      // not see that limit: such a body must say its length, as a multipart one must.
      const encoding = (req.get('content-encoding') ?? 'identity').trim().toLowerCase();
      if (length === undefined && req.get('transfer-encoding') !== undefined && encoding !== 'identity') return next(refusal('length required', 'compressed.length.required'));
      next(Number(length) > limit ? tooLarge() : undefined);
    },
    (req, res, next) => (takes(req, 'application/json') ? answerOverLimitAtOnce(json, limit, tooLarge)(req, res, next) : next()),
    // A middleware of its own, after the parser: Express's error handling covers it, as any other.
    (req, res, next) => (takes(req, 'application/json') ? refuseInfiniteNumbers(req, res, next) : next()),
    (req, res, next) => (takes(req, 'application/x-www-form-urlencoded') ? answerOverLimitAtOnce(form, limit, tooLarge)(req, res, next) : next()),
  ];
}

/**
 * A JSON or form body sent chunked says nothing of its size, and body-parser, once it has read past
 * the limit, reads the rest and drops it before it answers 413: as long as the client sends, up to
 * the request timeout (re-attack review, 2026-11-24). Its bytes are counted here as they arrive,
 * beside the parser's own reading, and past the limit the 413 is answered at once
 * (closeWhenBodyUnread then closes the connection, which ends the reading); the parser's late
 * answer is dropped. A body with a `Content-Length` was measured before it was read.
 */
function answerOverLimitAtOnce(parser: RequestHandler, limit: number, tooLarge: () => Error): RequestHandler {
  return (req, res, next) => {
    if (req.complete || req.get('content-length') !== undefined) return parser(req, res, next);
    let received = 0;
    let answered = false;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limit) return;
      req.off('data', count);
      answered = true;
      next(tooLarge());
    };
    // Added before the parser adds its own, in the same turn: both listeners see every chunk.
    req.on('data', count);
    parser(req, res, (error?: unknown) => {
      req.off('data', count);
      if (!answered) next(error);
    });
  };
}
