// Structured logs (pino) with one request id per request, and nothing secret in them: credentials
// and card data are redacted wherever they appear in a logged object.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type DestinationStream, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';

/** Keys that never reach a log, at any depth up to MAX_DEPTH (card data sits deep in request bodies). */
const SECRET_KEYS = ['security_code', 'card_number', 'expiry', 'number_token', 'client_secret', 'password', 'cryptogram', 'card.number'];
const MAX_DEPTH = 6;

function atAnyDepth(key: string): string[] {
  return Array.from({ length: MAX_DEPTH }, (_, depth) => [...Array(depth).fill('*'), key].join('.'));
}

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-sandbox-admin-token"]',
  'res.headers["set-cookie"]',
  ...SECRET_KEYS.flatMap(atAnyDepth),
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` when it is a sane token (no log injection), a new UUID otherwise. */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', id);
  return id;
}

/** One log line per request, at `error` for 5xx and `warn` for 4xx. */
export function httpLogging(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: requestId,
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
  });
}
