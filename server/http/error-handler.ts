// The one error handler of the app: logs what is a bug, and answers in the area's shape.
import type { ErrorRequestHandler, Request, Response } from 'express';
import type { Logger } from 'pino';
import { ContractViolation } from './errors.ts';
import { toApiError, type DocumentedOperation } from './error-normalising.ts';
import type { OperationAt, RenderedError } from './error-renderers.ts';
import { servedAs } from './head-requests.ts';
import { StoreUnavailable } from '../store/store.ts';

/**
 * Logs a failure nobody expected, with its stack. A store out of reach is not one: the store says
 * so once for the outage (store-log-lines.ts), and the request's own line has its 500.
 */
export function logUnexpected(log: Logger, error: unknown): void {
  if (!(error instanceof StoreUnavailable)) log.error({ err: error }, 'Unexpected error');
}

/** Any error as the body of the request's area (server/error-bodies.ts). */
export type RenderError = (error: unknown, request: OperationAt, operation?: DocumentedOperation) => RenderedError;

/** Set while the handler sends an error body: a contract violation found then is that body's. */
const SENDING_ERROR_BODY = Symbol('sending an error body');
export const sendingErrorBody = (res: Response) => (res.locals as Record<symbol, unknown>)[SENDING_ERROR_BODY] === true;

/**
 * The one error handler: logs what is a bug (5xx, contract violations), never puts a stack trace in
 * a body, and answers in the area's shape. An error body that itself breaks the contract comes back
 * to it (app.ts, the validator's onError, while `sendingErrorBody`) and is answered as a 500.
 */
export function errorHandler(
  logger: Logger,
  renderError: RenderError,
  routedOperation: (req: Request) => DocumentedOperation | undefined = () => undefined,
): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (res.headersSent) return next(error); // too late for a body; Express ends the connection
    const log = req.log ?? logger;
    if (error instanceof ContractViolation) {
      log.error({ contractViolation: { operation: error.operation, status: error.attemptedStatus, violations: error.violations } }, error.message);
    } else if (toApiError(error).status >= 500) {
      logUnexpected(log, error);
    }
    // The validator's operation; else the one security routed to (the validator refuses a path
    // parameter that does not decode, `%`, before it names the operation).
    const operation = (req as { openapi?: { schema?: DocumentedOperation } }).openapi?.schema ?? routedOperation(req);
    // A HEAD is answered as its GET, errors included: the area's rules name GETs.
    const rendered = renderError(error, { method: servedAs(req.method), path: req.path, template: req.operation?.template }, operation);
    res.status(rendered.status).set(rendered.headers);
    (res.locals as Record<symbol, unknown>)[SENDING_ERROR_BODY] = true;
    if (rendered.text !== undefined) res.type('text/plain').send(rendered.text);
    else res.json(rendered.json);
  };
}
