// Header fields a request may carry once. Node keeps the first line of each and drops the others
// (`req.headers`), so a proxy in front that read the last would route or authenticate the request
// by one value while the sandbox used another. Two Host lines are a 400 by RFC 9112 (section 3.2);
// Authorization is no list (RFC 9110, section 5.3: a sender does not repeat it). Refused on any
// listening address, before anything else runs.
import type { RequestHandler } from 'express';

const ONCE: Readonly<Record<string, string>> = { host: 'Host', authorization: 'Authorization' };

/** The plain-text answer to a request with two `name` lines. */
export const moreThanOne = (name: string) => `The request has more than one ${name} header line; a request carries one (RFC 9110, section 5.3; RFC 9112, section 3.2).`;

/** Refuses (400, plain text) a request that carries a field of ONCE on two lines or more. */
export const oneLineOfEach: RequestHandler = (req, res, next) => {
  const seen = new Set<string>();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = ONCE[raw[i]!.toLowerCase()];
    if (name === undefined) continue;
    if (seen.has(name)) return void res.status(400).type('text/plain').set('Cache-Control', 'no-store').send(moreThanOne(name));
    seen.add(name);
  }
  next();
};
