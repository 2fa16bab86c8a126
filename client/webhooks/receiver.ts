// A ready receiver for the checkout notification: verify, hand over to the merchant's handler, and
// answer 200 only once the handler has finished, because a 200 ends the platform's delivery (any
// other answer is retried, up to 10 attempts; see the webhook's retry policy in the contract).
// Typed on Node's http objects, so it mounts in Express 4 or 5 (`app.post('/', receiver)`) and in a
// bare `http.createServer(receiver)` alike, without Express types in the package's declarations.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isCheckoutNotificationError,
  validateCheckoutNotification,
  verifyNotificationCredentials,
  type CheckoutNotification,
  type NotificationCredentials,
} from './verify.ts';

export interface CheckoutNotificationReceiverOptions {
  /** The `notification.user_credentials` configured through `PATCH /technical-configurations`. */
  credentials: NotificationCredentials;
  /** The merchant's work (record the result, fulfil the order); deduplicate on `payment.result.payment_id`. */
  onNotification: (notification: CheckoutNotification) => Promise<void> | void;
  /** Told about a handler failure (answered 500, so the platform retries); the default logs nothing. */
  onError?: (error: unknown, notification: CheckoutNotification) => void;
  /** Largest body read, in bytes (default 1 MiB); a larger one is answered 413. */
  limitBytes?: number;
}

/** Node's request, with the `body` a JSON or raw body parser may have set before the receiver. */
export type NotificationRequest = IncomingMessage & { body?: unknown };

class BodyTooLarge extends Error {}

async function readBody(req: NotificationRequest, limitBytes: number): Promise<unknown> {
  // An earlier body parser (express.json(), express.raw(), ...) already read the stream: use its result.
  if (req.readableEnded) return req.body;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function answer(res: ServerResponse, status: number, body?: object, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (body === undefined) {
    res.end();
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

export function checkoutNotificationReceiver(
  options: CheckoutNotificationReceiverOptions,
): (req: NotificationRequest, res: ServerResponse, next?: (error?: unknown) => void) => Promise<void> {
  const limitBytes = options.limitBytes ?? 1024 * 1024;
  return async (req, res, next) => {
    if (req.method !== 'POST') return answer(res, 405, { error: 'method_not_allowed' }, { allow: 'POST' });
    let notification: CheckoutNotification;
    try {
      // Credentials first: a stranger's body is not even read.
      verifyNotificationCredentials(req.headers, options.credentials);
      notification = validateCheckoutNotification(await readBody(req, limitBytes));
    } catch (error) {
      if (error instanceof BodyTooLarge) return answer(res, 413, { error: 'payload_too_large' });
      if (!isCheckoutNotificationError(error)) {
        // Not the platform's fault (the receiver could not run): the platform will retry.
        if (next) return next(error);
        return answer(res, 500, { error: 'receiver_failed' });
      }
      if (error.reason !== 'invalid_payload') {
        // Which of user and password is wrong is never told.
        return answer(res, 401, { error: 'invalid_credentials' }, { 'www-authenticate': 'Basic realm="checkout-notification"' });
      }
      return answer(res, 400, { error: 'invalid_payload', problems: error.problems });
    }
    try {
      await options.onNotification(notification);
    } catch (error) {
      options.onError?.(error, notification);
      return answer(res, 500, { error: 'handler_failed' });
    }
    answer(res, 200);
  };
}
