// What the app gives every area's router, and what an area's routes module is: the one contract
// between server/app.ts and server/<area>/routes.ts, kept here so that neither imports the other's
// module for a type (no import cycle).
import type { RequestHandler, Router } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { HostResolver } from './host-resolver.ts';
import type { Store } from '../store/store.ts';

export interface AppDeps {
  store: Store;
  config: Config;
  logger: Logger;
  /** How notification URL host names are resolved; the system's resolver unless a test injects one. */
  resolveHostName?: HostResolver;
}

/** What every area's routes receive: the app's dependencies and the bearer check. */
export interface AreaDeps extends AppDeps {
  requireAccessToken: RequestHandler;
}

export type AreaRoutes = (deps: AreaDeps) => Router | Promise<Router>;
