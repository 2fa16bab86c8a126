// The sandbox administration token guarding the reference-only `/sandbox/v1` calls that create
// sellers, plans and payment links. Compared in constant time, like client secrets.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ApiError } from '../http/errors.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

export function requireSandboxAdmin(adminToken: string): RequestHandler {
  const expected = digest(adminToken);
  return (req, _res, next) => {
    const presented = /^Bearer +(\S+) *$/i.exec(req.get('authorization') ?? '')?.[1];
    if (presented !== undefined && timingSafeEqual(digest(presented), expected)) return next();
    next(new ApiError(401, 'unauthorized', 'Missing or wrong sandbox administration token', [], { 'WWW-Authenticate': 'Bearer realm="sandbox"' }));
  };
}
