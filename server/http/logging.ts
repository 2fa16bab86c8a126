// Structured logs (pino) with one request id per request, and nothing secret in them: credentials
// and card data are redacted wherever they appear in a logged object.
import { randomUUID } from 'node:crypto';
import { unescape } from 'node:querystring';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { pino, type DestinationStream, type Logger } from 'pino';
import { passesLuhn } from '../acquirer/index.ts';
import { callerIp, canonicalIp } from './caller-address.ts';

/** Keys that never reach a log, at any depth up to MAX_DEPTH (card data sits deep in request bodies). */
const SECRET_KEYS = ['security_code', 'card_number', 'expiry', 'number_token', 'client_secret', 'password', 'cryptogram', 'card.number'];
const MAX_DEPTH = 6;

function atAnyDepth(key: string): string[] {
  return Array.from({ length: MAX_DEPTH }, (_, depth) => [...Array(depth).fill('*'), key].join('.'));
}

const CENSOR = '[redacted]';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-sandbox-admin-token"]',
  'res.headers["set-cookie"]',
  ...SECRET_KEYS.flatMap(atAnyDepth),
];

/**
 * Query parameters whose names carry secrets (any case, anywhere in the name): `client_secret`,
 * `access_token`, `refresh_token`, `token`, `password`, `api_key`, `authorization`, `key`, ...
 * A careless client may send them in a URL; their values never reach a log line.
 */
const SECRET_PARAMETER = new RegExp(
  [
    'secret|token|passw(or)?d|pwd|api[-_]?key|^key$|[-_]key$|auth|credential|signature|^sig$|session|cookie|jwt|^code$',
    // Card data, as the body keys above: number, security code, expiry, cryptogram.
    'card|^pan$|^number$|cvv|cvc|cvn|security[-_]?code|^expiry|^exp(iration)?[-_]?(month|year|date)$|cryptogram',
  ].join('|'),
  'i',
);

/**
 * A digit, also percent-encoded (`%34` is `4`), and a separator between groups of digits: white
 * space or `-` (the hosted page's own form drops any amount of them), and in a URL `+` and their
 * encodings (`%20`, `%09` to `%0D`, `%C2%A0`, the other white space of JavaScript's `\s` in UTF-8
 * such as `%E3%80%80`, `%2D`, and an encoded `+`, `%2B`); up to 8 in a row
 * (attacker review, 2026-11-25: `4111++1111++1111++1111` and `%09` were logged as sent). The bound
 * keeps the search linear: unbounded, 16 KB of `%20` took it 66 ms, the square of its length (the
 * `2` and `0` of each `%20` are digits, each a start; re-attack review, 2026-11-25).
 */
const DIGIT = '(?:[0-9]|%3[0-9])';
const SEPARATOR = /(?:[\s+-]|%(?:0[9a-dA-D]|20|2[bBdD]|[cC]2%[aA]0|[eE]2%80%(?:8[0-9aA]|[aA][89fF])|[eE]2%81%9[fF]|[eE]3%80%80|[eE]1%9[aA]%80|[eE][fF]%[bB][bB]%[bB][fF])){1,8}/;
/**
 * Punctuation a card number is also written with (`4111.1111.1111.1111`, `_`, `/`, `,`, `:`), encoded
 * or not (attacker review, 2026-11-25): one mark, between two groups of four digits (the last group
 * may have three), so that an IPv4 address, a version, a time, a date (`2026/11/25`), a timestamp
 * with its fraction or a list of longer ids is never taken for one. Four groups of four, written so,
 * look like a card number: one in ten of them passes Luhn.
 */
const PUNCTUATION = /[._/,:]|%(?:2[cCeEfF]|5[fF]|3[aA])/;
/**
 * Where a card number sent under any name, or none, would be (`?cc=4111 1111 1111 1111`, a path
 * segment): groups of digits with separators or punctuation between them, not inside a word (a
 * letter or digit on either side; a `%XX` escape before is no letter), or a UUID, which is left as
 * it is (its groups of digits made a card number 1 time in ~190). One pattern for both kinds of
 * break, so that a group is looked at with its neighbours whichever way they are split
 * (`2026/4111 1111 1111 1111`; the re-attack review found a first pattern for punctuation alone
 * taking `2026/4111` for itself and the card number after it left whole).
 */
const NOT_IN_A_WORD_BEFORE = '(?<=^|[^A-Za-z0-9]|%[0-9A-Fa-f]{2})';
const NOT_IN_A_WORD_AFTER = '(?![A-Za-z0-9])';
const UUID_SHAPE = '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}';
const CARD_CANDIDATES = new RegExp(
  // A UUID only as a whole word: `deadbeef-dead-beef-dead-4111111111111111` is no UUID, and its last
  // 16 digits are looked at (re-attack review, 2026-11-25: they were logged, and taken as a request id).
  `${NOT_IN_A_WORD_BEFORE}${UUID_SHAPE}${NOT_IN_A_WORD_AFTER}` +
    `|${NOT_IN_A_WORD_BEFORE}${DIGIT}+(?:(?:${SEPARATOR.source}|${PUNCTUATION.source})${DIGIT}+)*${NOT_IN_A_WORD_AFTER}`,
  'g',
);
/** The breaks of a run, kept by `split` (a capturing group) to tell punctuation from white space. */
const BREAK = new RegExp(`(${SEPARATOR.source}|${PUNCTUATION.source})`);
const IS_PUNCTUATION = new RegExp(`^(?:${PUNCTUATION.source})$`);
/** A run the UUID alternative matched: exactly its shape (a run of digits may hold `A`-`F` in its escapes: `%C2%A0`). */
const UUID = new RegExp(`^${UUID_SHAPE}$`);

/**
 * `text` with every card number in it replaced: 12 to 19 digits passing Luhn (what the sandbox's
 * acquirer takes as a card number), written whole or in groups of at least three digits (4-4-4-4,
 * 4-6-5, a card number followed by its security code) split by white space or dashes, or in groups
 * of four split by punctuation, not part of a longer run of digits. Secret names cannot catch a card
 * number sent as `?cc=` or `?n=`: its form can. Other digits (full-width) are not how a card number
 * is written, and not looked for.
 */
export function withoutCardNumbers(text: string): string {
  return text.replace(CARD_CANDIDATES, (run) => {
    if (UUID.test(run) && /[A-Fa-f]/.test(run)) return run;
    const parts = run.split(BREAK); // group, break, group, ... as written
    const groups = parts.filter((_, i) => i % 2 === 0).map((group) => group.replace(/%3([0-9])/g, '$1'));
    const punctuated = parts.filter((_, i) => i % 2 === 1).map((mark) => IS_PUNCTUATION.test(mark));
    // Each group in a card number is hidden with the groups white space or dashes join to it (its
    // security code after it); what punctuation sets apart (a date before it) stays as written.
    const hidden = new Array<boolean>(groups.length).fill(false);
    for (let first = 0; first < groups.length; first++) {
      const last = cardNumberFrom(first, groups, punctuated);
      if (last === undefined) continue;
      let from = first;
      let to = last;
      while (from > 0 && !punctuated[from - 1]) from--;
      while (to < groups.length - 1 && !punctuated[to]) to++;
      hidden.fill(true, from, to + 1);
      first = to;
    }
    if (!hidden.includes(true)) return run;
    let kept = '';
    for (let i = 0; i < groups.length; i++) {
      if (!hidden[i]) kept += parts[2 * i];
      else if (i === 0 || !hidden[i - 1]) kept += CENSOR;
      if (i < groups.length - 1 && !(hidden[i] && hidden[i + 1])) kept += parts[2 * i + 1];
    }
    return kept;
  });
}

/**
 * The last group of a card number that starts at group `first`, if one does: whole groups of three
 * digits or more, 12 to 19 digits in all, by the acquirer's own check; across a punctuation mark
 * (`punctuated[i]`, between groups i and i + 1) only from a group of four to one of three or four.
 * A window holds at most six groups, so a header of thousands of groups stays cheap.
 */
function cardNumberFrom(first: number, groups: string[], punctuated: boolean[]): number | undefined {
  const joins = (last: number) => !punctuated[last - 1] || (groups[last - 1]!.length === 4 && groups[last]!.length >= 3 && groups[last]!.length <= 4);
  let digits = '';
  for (let last = first; last < groups.length && groups[last]!.length >= 3 && digits.length + groups[last]!.length <= 19 && (last === first || joins(last)); last++) {
    digits += groups[last];
    if (digits.length >= 12 && passesLuhn(digits)) return last;
  }
  return undefined;
}

/**
 * The URL as sent, with the values of secret-named query parameters and any card number replaced
 * (the rest byte for byte); `&` and `;` both separate parameters.
 */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return withoutCardNumbers(url);
  return withoutCardNumbers(`${url.slice(0, at)}?${redactParameters(url.slice(at + 1), /(^|[&;])([^&;=]*)(=[^&;]*)?/g)}`);
}

/**
 * A query value as logged, without card numbers: Express splits a query on `&` only, so
 * `?status=ACTIVE;token=…` gives `status` the value `ACTIVE;token=…`; a secret-named `;` parameter
 * inside it is redacted too.
 */
function loggedQueryValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(loggedQueryValue);
  // An integer parameter the validator read as a number (`?limit=4111111111111111`) is a card number too.
  if (typeof value === 'number') return withoutCardNumbers(String(value)) === String(value) ? value : CENSOR;
  if (typeof value !== 'string') return value;
  return withoutCardNumbers(value.includes(';') ? redactParameters(value, /(;)([^;=]*)(=[^;]*)?/g) : value);
}

/** `text` with the value of every secret-named parameter `parameters` matches (separator, name, `=value`) replaced. */
function redactParameters(text: string, parameters: RegExp): string {
  return text.replace(parameters, (parameter, separator: string, name: string) =>
    SECRET_PARAMETER.test(unescape(name)) ? `${separator}${name}=${CENSOR}` : parameter,
  );
}

/**
 * A Referer as logged: secret-named query parameters redacted (redactUrl), and neither the
 * fragment (`#access_token=…` of an implicit grant) nor a `user:password@` kept. Browsers send
 * neither; any other client may.
 */
export function redactReferer(referer: string): string {
  const withoutFragment = referer.split('#', 1)[0]!;
  // The authority's user information runs to its last `@`, as URL parsers read it; `\` counts as
  // `/`, and after a scheme any number of slashes (`http:user:pw@host` is read with credentials too).
  return redactUrl(withoutFragment.replace(/^((?:[a-z][a-z0-9+.-]*:)[\\/]*|[\\/]{2})[^/?\\]*@/i, `$1${CENSOR}@`));
}

/**
 * How much of a request a log line carries: a caller decides the size of its URL and headers (up to
 * Node's 16 KiB), and every request is logged, so without a bound any caller could write ~16 KiB
 * of log per request, unauthenticated (a 404 or a 429 is logged too). What is longer is cut, saying
 * how much was left out; the cut is made after the redaction, so that no secret is cut out of its
 * parameter and then logged. Values are cut in characters; what a line holds in all, in bytes of its
 * JSON (escapes and UTF-8 counted).
 */
export const LOGGED = { url: 2048, headerValue: 512, headers: 4096, query: 1024, params: 512 } as const;
/** The key under which a line says how many headers did not fit (not a header name: `(` is not a token character). */
export const MORE_HEADERS = '(more headers)';

const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max)}…[${text.length - max} more characters]`);

/** How many bytes `value` takes in a JSON log line (escapes and UTF-8 counted). */
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '');

/** What the URL holds again, parsed (its query, its path's parameters): as it is, or a note of its size when over `max` bytes (the URL is cut instead). */
function unlessLong(value: Record<string, unknown>, max: number): Record<string, unknown> | string {
  const size = jsonBytes(value);
  return size <= max ? value : `[${size} bytes, not logged: see url]`;
}

/** The headers as logged: each value cut to LOGGED.headerValue characters, and no more than LOGGED.headers bytes of JSON in all. */
function boundedHeaders(headers: Array<[string, unknown]>): Record<string, unknown> {
  const logged: Record<string, unknown> = {};
  let size = 0;
  for (const [index, [name, value]] of headers.entries()) {
    const bounded = Array.isArray(value) ? value.map((v) => cut(String(v), LOGGED.headerValue)) : typeof value === 'string' ? cut(value, LOGGED.headerValue) : value;
    size += jsonBytes(name) + jsonBytes(bounded) + 2; // "name":value,
    if (size > LOGGED.headers) {
      logged[MORE_HEADERS] = `${headers.length - index} not logged`;
      break;
    }
    logged[name] = bounded;
  }
  return logged;
}

/**
 * pino's request serializer, plus `callerAddress` when a trusted proxy named the caller (the address
 * the limits count, rate-limit.ts), with secret-named query parameters redacted from `url`, `query` and
 * the `Referer` header (a page that sent its visitor here may carry a token in its own URL), and
 * the values of secret-named headers (`Proxy-Authorization`, `X-Api-Key`, `X-Auth-Token`, ...);
 * then bounded in size (LOGGED).
 */
function serializeRequest(req: IncomingMessage) {
  const serialized = pino.stdSerializers.req(req) as Omit<ReturnType<typeof pino.stdSerializers.req>, 'query' | 'params'> & {
    query?: Record<string, unknown> | string;
    params?: Record<string, unknown> | string;
  };
  serialized.url = cut(redactUrl(serialized.url), LOGGED.url);
  // Behind a trusted proxy (TRUST_PROXY), the address the limits count: the connection's is the proxy's.
  const caller = callerIp(req as Request);
  if (caller !== canonicalIp(serialized.remoteAddress)) (serialized as typeof serialized & { callerAddress?: string }).callerAddress = caller;
  // A copy: the serializer hands back the request's own headers object.
  serialized.headers = boundedHeaders(
    Object.entries(serialized.headers ?? {}).map(([name, value]) => [
      withoutCardNumbers(name),
      SECRET_PARAMETER.test(name) ? CENSOR : typeof value !== 'string' ? value : name === 'referer' ? redactReferer(value) : withoutCardNumbers(value),
    ]),
  ) as typeof serialized.headers;
  if (serialized.query && typeof serialized.query === 'object') {
    const query = Object.fromEntries(Object.entries(serialized.query).map(([k, v]) => [withoutCardNumbers(k), SECRET_PARAMETER.test(k) ? CENSOR : loggedQueryValue(v)]));
    serialized.query = unlessLong(query, LOGGED.query);
  }
  // The path's parameters (a hosted page's id, decoded).
  if (serialized.params && typeof serialized.params === 'object') {
    const params = Object.fromEntries(Object.entries(serialized.params).map(([k, v]) => [k, typeof v === 'string' ? withoutCardNumbers(v) : v]));
    serialized.params = unlessLong(params, LOGGED.params);
  }
  return serialized;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: CENSOR } };
  return destination ? pino(options, destination) : pino(options);
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` when it is a sane token (no log injection), a new UUID otherwise. */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  // One holding a card number is not taken: it would be echoed and bound to every log line of the request.
  const id = typeof given === 'string' && REQUEST_ID.test(given) && withoutCardNumbers(given) === given ? given : randomUUID();
  res.setHeader('x-request-id', id);
  return id;
}

declare module 'node:http' {
  interface IncomingMessage {
    /** The request id (the caller's `x-request-id` when sane). */
    id?: string;
    /** A logger bound to this request (its id, method, url, headers), made on first use. */
    log?: Logger;
  }
}

/** A client that went away before its answer ended is the client's doing, like a 4xx: `warn`, not `error`. */
const LEVEL_OF = (status: number, aborted: boolean) => (status >= 500 ? 'error' : aborted || status >= 400 ? 'warn' : 'info');

/**
 * One log line per request when it ends (`request completed`, or `request aborted` when the
 * connection closed first, at `warn`), at `error` for 5xx, `warn` for 4xx and `info` otherwise, carrying the
 * request (id, method, url, headers: redacted by the logger) and the response (status, headers).
 *
 * Why not pino-http: it builds a child logger bound to the serialized request on every request,
 * and the logger's redaction walks that binding each time, even when nothing will be logged
 * (measured ~10% of the CPU of a short-id lookup under load with LOG_LEVEL=warn, `make bench`).
 * Here the line is serialized only when its level is enabled, and `req.log` is made on first use.
 */
export function httpLogging(logger: Logger) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    req.id = requestId(req, res);
    const started = performance.now();
    let bound: Logger | undefined;
    Object.defineProperty(req, 'log', {
      configurable: true,
      get: () => (bound ??= logger.child({ req: serializeRequest(req) })),
    });
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const aborted = !res.writableFinished;
      const level = LEVEL_OF(res.statusCode, aborted);
      if (!logger.isLevelEnabled(level)) return;
      const line = { req: serializeRequest(req), res: pino.stdSerializers.res(res), responseTime: Math.round(performance.now() - started) };
      logger[level](line, aborted ? 'request aborted' : 'request completed');
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}
