// Per-client rate limiting, as the contract decides (every operation may answer 429 with
// Retry-After, in its area's error body, and counted answers carry the IETF RateLimit and
// RateLimit-Policy fields): express-rate-limit, keyed by the verified token's client id, or by the
// caller's address where no token is sent (token endpoints, public lookups, sandbox) or where the
// one sent is refused (countingRefusals). The hosted pages are counted by address too, apart
// (rateLimitPages). Counted per server instance, in memory.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { callerIp } from './caller-address.ts';
import { ApiError } from './errors.ts';

export interface RateLimitConfig {
  /** Requests allowed per client in each window; 0 turns the limit off (benchmarks). */
  limit: number;
  windowMs: number;
}

/** Seconds until the caller's window ends, for Retry-After (at least 1). */
function secondsLeft(req: Request, windowMs: number): number {
  const resetTime = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  return Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));
}

/** express-rate-limit with the package's settings; a limit of 0 lets everything through. */
function limiter({ limit, windowMs }: RateLimitConfig, identifier: string, key: (req: Request) => string, refuse: (req: Request, res: Response, next: NextFunction, seconds: number) => void): RequestHandler {
  if (limit <= 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs,
    limit,
    // The IETF RateLimit and RateLimit-Policy fields (draft 8, as the contract documents them) on
    // every counted answer; Retry-After on a 429.
    standardHeaders: 'draft-8',
    identifier,
    legacyHeaders: false,
    keyGenerator: key,
    handler: (req, res, next) => refuse(req, res, next, secondsLeft(req, windowMs)),
  });
}

/**
 * An address as a count's key: IPv4 whole, IPv6 by its first `bits` (56 by default: one customer's
 * network; 64: one host's, for counts a neighbour's network must not fill).
 */
export const addressKey = (ip: string, bits = 56) => ipKeyGenerator(ip, bits);

/** The caller's address as limits count it (addressKey, /56). */
export const callerAddress = (req: Request) => addressKey(callerIp(req));

const byAddress = (req: Request) => `address:${callerAddress(req)}`;

export function rateLimitPerClient(config: RateLimitConfig): RequestHandler {
  return limiter(config, 'per-client', (req) => (req.accessToken ? `client:${req.accessToken.clientId}` : byAddress(req)), (_req, _res, next, seconds) =>
    next(new ApiError(429, 'too_many_requests', 'Too many requests, retry after the time in Retry-After', [], { 'Retry-After': String(seconds) })),
  );
}

/**
 * A scheme handler whose refusals (a forged or expired token, a wrong admin token) are counted by the
 * limiter as the caller's address, like a request without a token: over the limit, the refusal is
 * the 429. Otherwise authentication ran before the limiter and its 401s were never counted, so
 * guessing an admin token or forging tokens was unbounded.
 */
export function countingRefusals(handler: RequestHandler, limiter: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) =>
    handler(req, res, (refused?: unknown) => {
      if (!refused) return next();
      limiter(req, res, (limited?: unknown) => {
        if (limited) return next(limited);
        // The contract documents no RateLimit fields on a refused token's 401 (the client is unknown).
        for (const field of ['RateLimit', 'RateLimit-Policy']) res.removeHeader(field);
        next(refused);
      });
    });
}

/**
 * The hosted checkout and payment link pages, counted by address apart from the API (a page post
 * creates an order and a merchant notification): over the limit, a plain-text 429 with Retry-After.
 */
export function rateLimitPages(config: RateLimitConfig): RequestHandler {
  return limiter(config, 'per-address-pages', byAddress, (_req, res, _next, seconds) =>
    void res.status(429).set({ 'Retry-After': String(seconds), 'Cache-Control': 'no-store' }).type('text/plain').send(`Too many requests from this address: retry in ${seconds} s.`),
  );
}
