// Header fields a request may carry once. Node keeps the first line of each and drops the others
// (`req.headers`), so a proxy in front that read the last would route or authenticate the request
// by one value while the sandbox used another. Two Host lines are a 400 by RFC 9112 (section 3.2);
// Authorization is no list (RFC 9110, section 5.3: a sender does not repeat it). Refused on any
// listening address, before anything else runs.
import type { RequestHandler } from 'express';

const ONCE: Readonly<Record<string, string>> = { host: 'Host', authorization: 'Authorization' };

/** The plain-text answer to a request with two `name` lines. */
export const moreThanOne = (name: string) => `The request has more than one ${name} header line; a request carries one (RFC 9110, section 5.3; RFC 9112, section 3.2).`;

/**
 * Node keeps about the first 1,000 header lines of a request (its default `maxHeadersCount`, 2,000
 * names and values; a few more when they came in one batch) and drops the others without a word,
 * so a second Host or Authorization line after them went unseen (re-attack review). A request that
 * reaches that count may have lost lines: refused (431). Keeping every line instead let one 64 KB
 * head of 16,000 lines cost 5 times a request's CPU.
 */
export const MAX_HEADER_LINES = 1000;
export const TOO_MANY_LINES = `The request has ${MAX_HEADER_LINES} header lines or more; a request carries fewer.`;

/** Refuses (400, plain text) a request that carries a field of ONCE on two lines or more; 431 one that may have lost lines. */
export const oneLineOfEach: RequestHandler = (req, res, next) => {
  const seen = new Set<string>();
  const raw = req.rawHeaders;
  if (raw.length / 2 >= MAX_HEADER_LINES) return void res.status(431).type('text/plain').set('Cache-Control', 'no-store').send(TOO_MANY_LINES);
  for (let i = 0; i < raw.length; i += 2) {
    const name = ONCE[raw[i]!.toLowerCase()];
    if (name === undefined) continue;
    if (seen.has(name)) return void res.status(400).type('text/plain').set('Cache-Control', 'no-store').send(moreThanOne(name));
    seen.add(name);
  }
  next();
};
