// express-openapi-validator over the enforced bundle, built once per process for each bundle file
// and validation setting, and shared by every app of the process (the sandbox started again in one
// test worker, `startSandbox` after `close()`). Building it costs ~0.15 s of CPU each time (the
// validator bundles the spec's references and preprocesses every schema; ~0.45 s before the
// wrappers of validator-start-up.ts); the middleware holds nothing of an app: what differs per app (how its errors are
// answered and logged) is read from the request's app, `app.locals.contractViolation`.
import type { ErrorRequestHandler, Express, RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { PLATFORM_FORMATS } from './formats.ts';
import type { PlatformDocument } from './contract.ts';
import { ContractViolation } from './errors.ts';
import { sendingErrorBody } from './error-handler.ts';
import { MULTIPART_LIMITS } from './multipart-limits.ts';
import { cacheValidatorRouteLookup } from './route-lookup-cache.ts';
import { trimValidatorStartUp } from './validator-start-up.ts';

type Middleware = ReturnType<typeof OpenApiValidator.middleware>;

export interface ContractValidatorOptions {
  /** The bundle's file: the key of the process-wide cache, with `validation`. */
  file: string;
  apiSpec: PlatformDocument;
  /** `false`: neither requests nor responses are validated (benchmarks of the validation's cost). */
  validation: boolean;
  /** Paths the server answers that the bundle does not document (the validator lets them by). */
  undocumented: readonly string[];
  /** The multipart file kept (the product image): its part's name, and the most bytes read of it (its limit and one). */
  upload: { field: string; maxFileBytes: number };
}

/**
 * multer's `fileFilter`: the first file part named `field` is kept; multer reads every other file
 * part without keeping it (its default keeps them all in memory, which let one request of many
 * 5 MB parts hold gigabytes). The contract's "other parts are ignored".
 */
function keepFirstFile(field: string) {
  const taken = new WeakSet<object>();
  return (req: object, file: { fieldname: string }, keep: (error: null, accepted: boolean) => void) => {
    const first = file.fieldname === field && !taken.has(req);
    if (first) taken.add(req);
    keep(null, first);
  };
}

const built = new Map<string, Middleware>();

/** How an app answers a response that breaks the contract: its error handler, set on `app.locals`. */
export function answerContractViolations(app: Express, renderErrors: ErrorRequestHandler): void {
  app.locals.contractViolation = renderErrors;
}

export function contractValidator(options: ContractValidatorOptions): RequestHandler[] {
  const key = JSON.stringify([options.file, options.validation, options.undocumented, options.upload]);
  let middleware = built.get(key);
  if (!middleware) {
    middleware = build(options);
    built.set(key, middleware);
  }
  return middleware as RequestHandler[];
}

function build({ apiSpec, validation, undocumented, upload }: ContractValidatorOptions): Middleware {
  cacheValidatorRouteLookup(); // the per-request route lookup, compiled once (upstream #1217)
  trimValidatorStartUp(); // no schema compiled at build time only to be thrown away
  return OpenApiValidator.middleware({
    apiSpec: apiSpec as Parameters<typeof OpenApiValidator.middleware>[0]['apiSpec'],
    // The contract is linted by Redocly (make lint). The validator's own OAS 3.1 schema refuses
    // what the contract rightly has (a relative oauth2 tokenUrl), so it does not check it again.
    validateApiSpec: false,
    // Every broken rule of a request is reported (one detail each), not only the first.
    validateRequests: validation === false ? false : { allErrors: true },
    // A response that breaks the contract is a bug: it becomes a 500 and a logged violation.
    validateResponses:
      validation === false
        ? false
        : {
            onError: (error, _body, req) => {
              const violation = new ContractViolation(`${req.method} ${req.path}`, req.res?.statusCode ?? 0, error.errors);
              // An error body that breaks the contract: the app's error handler answers it at once as
              // a 500 (the body is not sent); any other response's violation goes to it through next.
              const renderErrors = req.app.locals.contractViolation as ErrorRequestHandler | undefined;
              if (req.res && renderErrors && sendingErrorBody(req.res)) return void renderErrors(violation, req, req.res, () => undefined);
              throw violation;
            },
          },
    // `date` and `date-time` within the years the platform stores, `email` as the compiled checks read it (formats.ts).
    formats: PLATFORM_FORMATS,
    validateSecurity: false, // authenticateByContract did it, before validation
    ignoreUndocumented: false, // a path outside the contract is a 404 in its area's shape
    ignorePaths: (path: string) => undocumented.includes(path),
    // multipart/form-data (the product image upload) is parsed by the validator's multer, in memory:
    // one file part kept, at most maxFileBytes of it, and few small text parts.
    fileUploader: { limits: { fileSize: upload.maxFileBytes, ...MULTIPART_LIMITS }, fileFilter: keepFirstFile(upload.field) },
  });
}
