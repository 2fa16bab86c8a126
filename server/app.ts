// The whole request path on one screen: logging → authentication by the contract's security →
// body parsers → contract validation (both directions) → area routers → one error handler that
// answers in the area's shape.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import express, { type Express } from 'express';
import { createAuthentication } from './authentication/index.ts';
import type { AppDeps, AreaDeps, AreaRoutes } from './http/area-routes.ts';
import type { PlatformDocument } from './http/contract.ts';
import { bodyParsers } from './http/body-parsers.ts';
import { multipartBodyBytes } from './http/multipart-limits.ts';
import { refuseLooseIntegers } from './http/integer-spelling.ts';
import { localHostNamesOnly } from './http/local-host-names.ts';
import { oneLineOfEach } from './http/single-field-lines.ts';
import { closeWhenBodyUnread } from './http/unread-bodies.ts';
import { headAgain, headAsGet } from './http/head-requests.ts';
import { ROUTING, type RoutedOperation } from './http/operations.ts';
import { requireAccessToken } from './authentication/bearer.ts';
import { countingRefusals, rateLimitPages, rateLimitPerClient } from './http/rate-limit.ts';
import { authenticateByContract } from './http/security.ts';
import { requireSandboxAdmin } from './sandbox/admin.ts';
import { ApiError } from './http/errors.ts';
import { errorHandler } from './http/error-handler.ts';
import { answerContractViolations, contractValidator } from './http/contract-validator.ts';
import { renderError } from './error-bodies.ts';
import { httpLogging } from './http/logging.ts';
import { keepContractMembers } from './http/contract-members.ts';
import { originFormFirst, refuseNonTargets } from './http/origin-form.ts';
import { refuseNonText } from './http/text-guard.ts';
import { checkoutPages } from './hosted-checkout/routes.ts';
import { sandboxNotificationRoutes } from './sandbox/notifications/routes.ts';
import { paymentLinkRoutes } from './payment-link/routes.ts';
import { PRODUCT_IMAGE_FIELD, PRODUCT_IMAGE_MAX_BYTES } from './payment-link/errors.ts';
import { sandboxSellerRoutes } from './sandbox/sellers/routes.ts';
import { sandboxPaymentLinkRoutes } from './sandbox/payment-links/routes.ts';
import { webCheckoutRoutes } from './web-checkout/routes.ts';
import { subscriptionRoutes } from './subscription/routes.ts';
import { planRoutes } from './plan/routes.ts';
import { subscriptionWebhookRoutes } from './subscription-webhook/routes.ts';
import { sandboxPlanRoutes } from './sandbox/plans/routes.ts';
import { sandboxTestClockRoutes } from './sandbox/test-clocks/routes.ts';

export type { AppDeps, AreaDeps, AreaRoutes } from './http/area-routes.ts';

/** Each area adds one line: its `server/<area>/routes.ts` export. Authentication comes first, below. */
const AREAS: AreaRoutes[] = [
  paymentLinkRoutes,
  sandboxSellerRoutes,
  sandboxPaymentLinkRoutes,
  webCheckoutRoutes,
  sandboxNotificationRoutes,
  subscriptionRoutes,
  planRoutes,
  subscriptionWebhookRoutes,
  sandboxPlanRoutes,
  sandboxTestClockRoutes,
];

/**
 * Reference-only routes the server answers whatever bundle it enforces. A bundle without the
 * sandbox area (one area's bundle, in tests) does not document them: the validator lets them by.
 */
const REFERENCE_ONLY: RoutedOperation[] = [{ method: 'GET', template: '/sandbox/v1/jwks', schemes: [], bodyTypes: [], integers: [] }];

/**
 * The bundle as data, read now so that a missing or broken file fails at start, not on a request:
 * JSON (`generated/platform.openapi.json`, the default: it parses ~20× faster) or YAML.
 */
function loadApiSpec(file: string): PlatformDocument {
  try {
    const text = readFileSync(file, 'utf8');
    // The YAML parser is loaded for a YAML bundle only: ~45 ms of every first start otherwise.
    return file.endsWith('.json') ? JSON.parse(text) : (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new Error(`API_SPEC: cannot read the contract bundle ${file}: ${reason}`, { cause: error });
  }
}

/** The product image upload's one file part: one byte over the image limit is read, so that the upload's own check answers image_too_large. */
const UPLOAD = { field: PRODUCT_IMAGE_FIELD, maxFileBytes: PRODUCT_IMAGE_MAX_BYTES + 1 };

/** The validator of a config's bundle (built once per process and bundle: http/contract-validator.ts). */
function validatorOf(config: AppDeps['config'], apiSpec: PlatformDocument) {
  return contractValidator({
    file: config.apiSpec,
    apiSpec,
    validation: config.validation !== false,
    undocumented: REFERENCE_ONLY.map((op) => op.template).filter((path) => !(path in (apiSpec.paths ?? {}))),
    upload: UPLOAD,
  });
}

/**
 * Starts building the validator of the config's bundle now (~0.15 s of CPU), so that it overlaps
 * the store's opening, which runs on PGlite's own thread; createApp then finds it built.
 */
export function prepareContract(config: AppDeps['config']): void {
  validatorOf(config, loadApiSpec(config.apiSpec));
}

const FORGET_COUNTS = Symbol('forget the counts kept in memory');

/** Forgets what the app counts in memory against guessing (failed token attempts): part of a sandbox's reset. */
export function forgetCounts(app: Express): void {
  ((app.locals as Record<symbol, unknown>)[FORGET_COUNTS] as (() => void) | undefined)?.();
}

/** `extraAreas` are mounted before the platform's areas, so that tests' own operations win over real ones. */
export async function createApp(deps: AppDeps, extraAreas: AreaRoutes[] = []): Promise<Express> {
  const { config, logger, store } = deps;
  const apiSpec = loadApiSpec(config.apiSpec);
  const authentication = await createAuthentication(store, config, logger);
  const areaDeps: AreaDeps = {
    ...deps,
    requireAccessToken: requireAccessToken(authentication.verifyAccessToken),
  };

  const renderErrors = errorHandler(logger, renderError, (req) => req.operation && apiSpec.paths[req.operation.template]?.[req.operation.method.toLowerCase()]);

  const app = express();
  originFormFirst(app); // an absolute-form target read as its path, its authority as the host (http/origin-form.ts)
  app.disable('x-powered-by');
  // Whose X-Forwarded-For names the caller (config.ts, TRUST_PROXY): none unless told; req.ip is then
  // the address that the limits, the token throttle and the hashing line count.
  app.set('trust proxy', config.trustProxy ?? false);
  (app.locals as Record<symbol, unknown>)[FORGET_COUNTS] = authentication.forgetFailedAttempts;
  // One routing truth (http/operations.ts): the routers, the validator (it reads these settings) and
  // the security decision match paths the same way, case-sensitive and strict.
  app.set('case sensitive routing', ROUTING.caseSensitive);
  app.set('strict routing', ROUTING.strict);
  app.use(httpLogging(logger));
  app.use(refuseNonTargets); // a target neither a path nor an absolute http(s) URL (http/origin-form.ts)
  app.use(closeWhenBodyUnread); // an answer before the whole body arrived closes the connection (http/unread-bodies.ts)
  // No browser reads any answer as anything but its type: the API's, the pages', the plain-text refusals.
  app.use((_req, res, next) => {
    res.set('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.use(oneLineOfEach); // one Host and one Authorization line (http/single-field-lines.ts)
  app.use(localHostNamesOnly(config)); // on a loopback address, local Host names only (DNS rebinding)
  // The HTML reference (`make docs`) is for people, not an API operation: served before the validator.
  app.get('/docs', (_req, res) => {
    if (existsSync(config.docsFile)) return res.sendFile(config.docsFile);
    res.status(404).type('text/plain').send('The HTML reference is not here: DOCS_FILE names no file (in a clone of the repository, `make docs` builds it).');
  });
  // The hosted checkout and payment link pages are HTML for people too: before the validator,
  // counted by address apart from the API.
  app.use(['/checkout', '/pay'], rateLimitPages(config.rateLimit));
  app.use(checkoutPages(deps));
  // The API's answers are per caller and some carry secrets (a new seller's client_secret): no
  // cache keeps any of them, errors included.
  app.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  const limitPerClient = rateLimitPerClient(config.rateLimit);
  app.use(
    authenticateByContract(
      apiSpec,
      {
        // A refused token or admin token is counted against the caller's address (rate-limit.ts).
        oauth2: countingRefusals(areaDeps.requireAccessToken, limitPerClient),
        sandboxAdmin: countingRefusals(requireSandboxAdmin(config.sandboxAdminToken), limitPerClient),
        // The second token form checks the client's Basic credentials itself, in its own error shape.
        clientBasicAuth: (_req, _res, next) => next(),
      },
      REFERENCE_ONLY,
    ),
  );
  app.use(limitPerClient); // after authentication: keyed by the token's client
  app.use(bodyParsers(config.bodyLimit, multipartBodyBytes(UPLOAD.maxFileBytes))); // JSON or a form, for the operations that take it (http/body-parsers.ts)
  app.use(refuseLooseIntegers); // integer parameters in decimal digits only, before the validator coerces them
  // The validator is built once per process and bundle (http/contract-validator.ts); a response that
  // breaks the contract is answered by this app's error handler.
  answerContractViolations(app, renderErrors);
  app.use(headAsGet); // a HEAD is validated as the GET it stands for (http/head-requests.ts)
  app.use(validatorOf(config, apiSpec));
  app.use(headAgain);

  app.use(refuseNonText); // what the contract cannot say: open objects' members, Basic credentials
  app.use(keepContractMembers(apiSpec)); // unknown members accepted, not kept (http/contract-members.ts)
  app.use(authentication.routes);
  for (const routes of [...extraAreas, ...AREAS]) app.use(await routes(areaDeps));

  app.use((req, _res, next) => {
    const documented = 'openapi' in req && req.openapi !== undefined;
    next(
      documented
        ? new ApiError(501, 'not_implemented', `${req.method} ${req.path} is in the contract but not implemented by the reference server yet`)
        : new ApiError(404, undefined, 'Not found'),
    );
  });
  app.use(renderErrors);
  return app;
}
