// The request bodies read before the validator: a JSON body only for an operation whose contract
// takes JSON, a URL-encoded form only for one that takes a form (the token endpoints). Any other
// request's body is left unread: the validator refuses its media type without it. Before this,
// every request to a known path had its JSON parsed, the public token endpoint's and a wrong
// method's too, and a 1 MB body of nested brackets held the event loop ~180 ms before its refusal.
// A JSON body nesting deeper than MAX_JSON_DEPTH is refused before it is parsed.
import express, { type Request, type RequestHandler } from 'express';

/** How deep a JSON body may nest; the contract's deepest request body is under 8 levels. */
export const MAX_JSON_DEPTH = 32;

const OPEN = new Set([0x7b, 0x5b]); // { [
const CLOSE = new Set([0x7d, 0x5d]); // } ]

/** body-parser's `verify`: one pass over the raw bytes, brackets inside strings not counted. */
function refuseDeepJson(_req: unknown, _res: unknown, body: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]!;
    if (inString) {
      if (byte === 0x5c) i++; // a backslash: the next byte is escaped
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (OPEN.has(byte)) {
      if (++depth > MAX_JSON_DEPTH) {
        // An http-error as body-parser raises them (400, shown to the client); error-normalising.ts words it.
        throw Object.assign(new Error('JSON nested too deep'), { status: 400, expose: true, type: 'entity.too.deep' });
      }
    } else if (CLOSE.has(byte)) depth--;
  }
}

const takes = (req: Request, type: string) => req.operation?.bodyTypes.includes(type) === true;

/** The JSON and form parsers, each run only for an operation that takes its media type. */
export function bodyParsers(limit: string): RequestHandler[] {
  const json = express.json({ limit, verify: refuseDeepJson });
  const form = express.urlencoded({ extended: false, limit });
  return [
    (req, res, next) => (takes(req, 'application/json') ? json(req, res, next) : next()),
    (req, res, next) => (takes(req, 'application/x-www-form-urlencoded') ? form(req, res, next) : next()),
  ];
}
