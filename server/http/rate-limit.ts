// Per-client rate limiting, as the contract decides (every operation may answer 429 with
// Retry-After, in its area's error body, and counted answers carry the IETF RateLimit and
// RateLimit-Policy fields): express-rate-limit, keyed by the verified token's client id, or by the
// caller's address where no token is sent (token endpoints, public lookups, sandbox).
// Counted per server instance, in memory.
import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { ApiError } from './errors.ts';

export interface RateLimitConfig {
  /** Requests allowed per client in each window; 0 turns the limit off (benchmarks). */
  limit: number;
  windowMs: number;
}

export function rateLimitPerClient({ limit, windowMs }: RateLimitConfig): RequestHandler {
  if (limit <= 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs,
    limit,
    // The IETF RateLimit and RateLimit-Policy fields (draft 8, as the contract documents them) on
    // every counted answer; Retry-After on a 429.
    standardHeaders: 'draft-8',
    identifier: 'per-client',
    legacyHeaders: false,
    keyGenerator: (req) => (req.accessToken ? `client:${req.accessToken.clientId}` : `address:${ipKeyGenerator(req.ip ?? '')}`),
    handler: (req, _res, next) => {
      const resetTime = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));
      next(new ApiError(429, 'too_many_requests', 'Too many requests, retry after the time in Retry-After', [], { 'Retry-After': String(seconds) }));
    },
  });
}
