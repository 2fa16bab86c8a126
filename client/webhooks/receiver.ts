// A ready receiver for the checkout notification: verify, hand over to the merchant's handler, and
// answer 200 only once the handler has finished, because a 200 ends the platform's delivery (any
// other answer is retried, up to 10 attempts; see the webhook's retry policy in the contract).
// Typed on what it uses of Node's http objects (NotificationRequest, NotificationResponse), so it mounts
// in Express 4 or 5 (`app.post('/', receiver)`) and in a bare `http.createServer(receiver)` alike,
// with neither Express's nor Node's types in the package's declarations (a browser project
// type-checks them without @types/node); and as a Fetch API handler (`Request` → `Response`) for
// Next.js route handlers, Hono and the like.
import { concatBytes, utf8 } from '../encoding.ts';
import {
  isCheckoutNotificationError,
  validateCheckoutNotification,
  verifyNotificationCredentials,
  type CheckoutNotification,
  type HeaderBag,
  type NotificationCredentials,
} from './verify.ts';

export interface CheckoutNotificationReceiverOptions {
  /** The `notification.user_credentials` configured through `PATCH /technical-configurations`. */
  credentials: NotificationCredentials;
  /** The merchant's work (record the result, fulfil the order); deduplicate on `payment.result.payment_id`. */
  onNotification: (notification: CheckoutNotification) => Promise<void> | void;
  /** Told about a handler failure (answered 500, so the platform retries); the default logs nothing. */
  onError?: ((error: unknown, notification: CheckoutNotification) => void) | undefined;
  /** Largest body read, in bytes (default 1 MiB); a larger one is answered 413. */
  limitBytes?: number | undefined;
}

/**
 * What the receiver reads of Node's request (`http.IncomingMessage`, Express's `Request`), with the
 * `body` a JSON or raw body parser may have set before it.
 */
export interface NotificationRequest extends AsyncIterable<unknown> {
  method?: string | undefined;
  headers: HeaderBag;
  /** True once a body parser has read the stream: `body` is then what it made of it. */
  readableEnded: boolean;
  body?: unknown;
}

/** What the receiver uses of Node's response (`http.ServerResponse`, `http2.Http2ServerResponse`, Express's `Response`). */
export interface NotificationResponse {
  readonly headersSent: boolean;
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(): unknown;
  end(body: string): unknown;
}

class BodyTooLarge extends Error {}

async function readBody(req: NotificationRequest, limitBytes: number): Promise<unknown> {
  // An earlier body parser (express.json(), express.raw(), ...) already read the stream: use its result.
  if (req.readableEnded) return req.body;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req) {
    const bytes = typeof chunk === 'string' ? utf8(chunk) : (chunk as Uint8Array);
    size += bytes.byteLength;
    if (size > limitBytes) throw new BodyTooLarge();
    chunks.push(bytes);
  }
  return concatBytes(chunks, size);
}

function answer(res: NotificationResponse, status: number, body?: object, headers: Record<string, string> = {}): void {
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

/** The receiver's answer, whatever the framework. */
interface Answer {
  status: number;
  body?: object;
  headers?: Record<string, string>;
}

const unauthorized: Answer = { status: 401, body: { error: 'invalid_credentials' }, headers: { 'www-authenticate': 'Basic realm="checkout-notification"' } };

/** The receiver's decision: verify, hand over, answer. `readBody` reads the raw body within the limit. */
async function receive(
  method: string | undefined,
  headers: HeaderBag,
  readBody: () => Promise<unknown>,
  options: CheckoutNotificationReceiverOptions,
): Promise<Answer> {
  if (method !== 'POST') return { status: 405, body: { error: 'method_not_allowed' }, headers: { allow: 'POST' } };
  let notification: CheckoutNotification;
  try {
    // Credentials first: a stranger's body is not even read.
    verifyNotificationCredentials(headers, options.credentials);
    notification = validateCheckoutNotification(await readBody());
  } catch (error) {
    if (error instanceof BodyTooLarge) return { status: 413, body: { error: 'payload_too_large' } };
    // Not the platform's fault (the receiver could not run): the caller answers 500 or passes it on.
    if (!isCheckoutNotificationError(error)) throw error;
    // Which of user and password is wrong is never told.
    if (error.reason !== 'invalid_payload') return unauthorized;
    return { status: 400, body: { error: 'invalid_payload', problems: error.problems } };
  }
  try {
    await options.onNotification(notification);
  } catch (error) {
    options.onError?.(error, notification);
    return { status: 500, body: { error: 'handler_failed' } };
  }
  return { status: 200 };
}

/** For Express 4 or 5 (`app.post(path, receiver)`) and `http.createServer(receiver)`. */
export function checkoutNotificationReceiver(
  options: CheckoutNotificationReceiverOptions,
): (req: NotificationRequest, res: NotificationResponse, next?: (error?: unknown) => void) => Promise<void> {
  const limitBytes = options.limitBytes ?? 1024 * 1024;
  return async (req, res, next) => {
    let outcome: Answer;
    try {
      outcome = await receive(req.method, req.headers, () => readBody(req, limitBytes), options);
    } catch (error) {
      if (next) return next(error);
      outcome = { status: 500, body: { error: 'receiver_failed' } };
    }
    // The rest of a body over the limit is never read: the connection is closed with the answer, or
    // it would stay open (and a server's close() wait for it) until the client gives up.
    const close: Record<string, string> = outcome.status === 413 ? { connection: 'close' } : {};
    answer(res, outcome.status, outcome.body, { ...outcome.headers, ...close });
  };
}

async function readRequestBody(request: Request, limitBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length'));
  if (declared > limitBytes) throw new BodyTooLarge();
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel();
      throw new BodyTooLarge();
    }
    chunks.push(value);
  }
  return concatBytes(chunks, size);
}

/**
 * The same receiver for Fetch API handlers (`Request` in, `Response` out): Next.js route handlers,
 * Hono, Bun, Deno, Cloudflare Workers. Same answers as the Node receiver; an unexpected failure is
 * answered 500 (the platform retries).
 */
export function checkoutNotificationHandler(options: CheckoutNotificationReceiverOptions): (request: Request) => Promise<Response> {
  const limitBytes = options.limitBytes ?? 1024 * 1024;
  return async (request) => {
    let outcome: Answer;
    try {
      outcome = await receive(request.method, request.headers, () => readRequestBody(request, limitBytes), options);
    } catch {
      outcome = { status: 500, body: { error: 'receiver_failed' } };
    }
    const headers = new Headers(outcome.headers);
    if (outcome.body === undefined) return new Response(null, { status: outcome.status, headers });
    headers.set('content-type', 'application/json');
    return new Response(JSON.stringify(outcome.body), { status: outcome.status, headers });
  };
}
