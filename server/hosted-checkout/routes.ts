// The hosted pages, HTML for people (mounted before the contract's validator, like /docs):
// a payment intent's checkout at its redirect_url, and each payment link's public page.
import { randomBytes } from 'node:crypto';
import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { orderTotal } from '../payment-link/orders.ts';
import type { Store } from '../store/store.ts';
import { logUnexpected } from '../http/error-handler.ts';
import type { Config } from '../config.ts';
import { ROUTING } from '../http/operations.ts';
import { callerIp } from '../http/caller-address.ts';
import { DOCUMENT_TYPES_BY_COUNTRY } from '../web-checkout/service.ts';
import { frontendOfForm } from './notification.ts';
import { measuredBody } from '../http/body-size.ts';
import { isPageAddress, methodNotTaken, noSuchPage, refuseCrossSiteForms, refuseUnreadablePageInput } from './page-guard.ts';
import { ownOrigins } from '../http/other-sites.ts';
import { checkoutPage, contentSecurityPolicy, layoutOf, messagePage, type CheckoutPageModel } from './pages.ts';
import { offeredMethods, pageInstallmentOptions } from './payment-methods.ts';
import type { PaymentMethods } from '../payment-link/payment-methods.ts';
import { PageError } from './page-error.ts';
import { linkOrderResult, payableIntent, payableLink, payPaymentIntent, payPaymentLink, type IntentPage, type LinkPage } from './service.ts';

const HEADINGS: Record<PageError['kind'], string> = {
  not_found: 'Checkout not found',
  method: 'Nothing to show here',
  expired: 'No longer available',
  already_paid: 'Already paid',
  inactive: 'Not available',
  form: 'Check your details',
  cross_site: 'Not sent from this page',
  unreadable: 'Could not read this request',
  failed: 'Something went wrong',
};

/**
 * Any other error of a page route as a page, never the API's JSON: what the body parser or the router
 * refused (a form too large, an encoding or charset it cannot read, an undecodable address) with its
 * 4xx, anything else a 500 page, logged as the app's error handler logs it.
 */
function pageErrorOf(error: unknown, req: Request, logger: Logger): PageError {
  if (error instanceof PageError) return error;
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 500) {
    const text =
      status === 413
        ? 'The form is too large to be sent.'
        : req.method === 'POST'
          ? 'The form could not be read: go back to the page and send it again.'
          : 'This address could not be read: check the link you were given.';
    return new PageError(status, 'unreadable', text);
  }
  logUnexpected(req.log ?? logger, error);
  return new PageError(500, 'failed', 'This page failed on our side. Try again in a moment.');
}

/** Card fields are never echoed back into a re-rendered form. */
const NOT_ECHOED = new Set(['card_number', 'security_code', 'expiry', 'cardholder_name']);
const echoed = (form: Record<string, unknown>) => Object.fromEntries(Object.entries(form).filter(([k]) => !NOT_ECHOED.has(k)));

function send(res: Response, status: number, html: string, nonce?: string, redirects = false) {
  res.status(status).set({
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    // No Referer leaves the sandbox (the page's address carries the payment intent), and the page's
    // own form post carries its real Origin, which refuseCrossSiteForms checks.
    'referrer-policy': 'same-origin',
    'content-security-policy': contentSecurityPolicy(nonce ?? randomBytes(16).toString('base64'), redirects),
  }).send(html);
}

/** The largest payment form a page takes: a few hundred bytes of fields. */
const FORM_BYTES = 32 * 1024;

/** A 303 after a payment form's post; kept by no cache, as the pages are. */
function seeOther(res: Response, location: string) {
  res.set('cache-control', 'no-store').redirect(303, location);
}

export function checkoutPages(deps: { store: Store; config: Config; logger: Logger; now?: () => Date }): Router {
  const { store, config } = deps;
  const now = deps.now ?? (() => new Date());
  const router = Router(ROUTING);
  router.use(
    ['/checkout', '/pay'],
    refuseCrossSiteForms(ownOrigins(config.publicBaseUrl)),
    (req, res, next) => next(measuredBody(req, res, FORM_BYTES)), // before the parser reads it (http/body-size.ts)
    express.urlencoded({ extended: false, limit: FORM_BYTES }),
    refuseUnreadablePageInput,
  );
  const plainLayout = layoutOf({ primaryColor: '#0B3B8C', accentColor: '#F5A623', typeFace: 'Platform Micro Text' });

  function sendError(res: Response, error: unknown) {
    const page = pageErrorOf(error, res.req, deps.logger);
    send(res, page.status, messagePage({ title: HEADINGS[page.kind], heading: HEADINGS[page.kind], text: page.message, layout: plainLayout }));
  }

  function intentModel(page: IntentPage, nonce: string, error?: string): CheckoutPageModel {
    const { intent, seller, configuration } = page;
    const verification = intent.flow === 'card_verification';
    const payments = seller.payments as PaymentMethods;
    const products = (intent.products ?? []) as Array<{ title: string; value: number; quantity: number }>;
    return {
      tradeName: seller.tradeName,
      layout: layoutOf(configuration),
      country: seller.country,
      currency: intent.currency ?? seller.currencies[0]!,
      lines: products.map((p) => ({ title: p.title, quantity: p.quantity, amount: p.value })),
      shippingAmount: Number((intent.shipping as { shipping_amount?: number } | null)?.shipping_amount ?? 0),
      total: intent.amount ?? 0,
      verification,
      methods: offeredMethods(seller.country, payments, intent.flow),
      installments: verification ? [] : pageInstallmentOptions(payments),
      action: `/checkout/${intent.paymentIntentId}/pay`,
      error,
      nonce,
      redirects: Object.keys(page.redirects).length > 0,
    };
  }

  function linkModel(page: LinkPage, nonce: string, values: Record<string, unknown>, error?: string): CheckoutPageModel {
    const { link, seller, configuration } = page;
    return {
      tradeName: seller.tradeName,
      layout: layoutOf(configuration),
      country: seller.country,
      currency: link.currency,
      lines: link.products.map((p) => ({ title: p.title, quantity: p.quantity ?? 1, amount: p.amount })),
      shippingAmount: link.shippingAmount,
      total: orderTotal(link),
      methods: offeredMethods(seller.country, link.payment),
      installments: pageInstallmentOptions(link.payment),
      action: `/pay/${encodeURIComponent(link.shortId)}`,
      buyer: { documentTypes: DOCUMENT_TYPES_BY_COUNTRY[seller.country] ?? [], deliveryAddress: link.requestDeliveryAddress, values },
      error,
      nonce,
    };
  }

  const nonce = () => randomBytes(16).toString('base64');

  /** The checkout page of a model built with a fresh nonce, or the page of why it cannot be shown. */
  async function showCheckoutPage(res: Response, status: number, model: (nonce: string) => Promise<CheckoutPageModel>) {
    const n = nonce();
    try {
      const page = await model(n);
      send(res, status, checkoutPage(page), n, page.redirects);
    } catch (error) {
      sendError(res, error);
    }
  }

  router.get('/checkout/:paymentIntentId', (req, res) =>
    showCheckoutPage(res, 200, async (n) => intentModel(await payableIntent(store, req.params.paymentIntentId, now()), n)),
  );

  router.post('/checkout/:paymentIntentId/pay', async (req, res) => {
    const id = req.params.paymentIntentId;
    const form = (req.body ?? {}) as Record<string, unknown>;
    try {
      const outcome = await payPaymentIntent(store, { paymentIntentId: id, form, frontend: frontendOfForm(form, { link: `${config.publicBaseUrl}/checkout/${id}`, ip: callerIp(req) }), now: now() });
      const authorized = outcome.result.status === 'Authorized';
      const target = authorized ? outcome.redirects.success : outcome.redirects.error;
      if (target) return seeOther(res, target);
      send(
        res,
        200,
        messagePage({
          title: authorized ? 'Payment authorized' : 'Payment denied',
          heading: authorized ? (outcome.intent.flow === 'card_verification' ? 'Card verified' : 'Payment authorized') : 'Payment denied',
          text: authorized ? 'Thank you. You can close this page.' : `${outcome.result.returnMessage}. You can try again with another card.`,
          layout: layoutOf(outcome.configuration),
          tradeName: outcome.seller.tradeName,
          ...(authorized ? {} : { link: { href: `/checkout/${id}`, label: 'Try again' } }),
        }),
      );
    } catch (error) {
      if (error instanceof PageError && error.kind === 'form') {
        return showCheckoutPage(res, 422, async (n) => intentModel(await payableIntent(store, id, now()), n, error.message));
      }
      sendError(res, error);
    }
  });

  router.get('/pay/:shortId', (req, res) => showCheckoutPage(res, 200, async (n) => linkModel(await payableLink(store, req.params.shortId, now()), n, {})));

  router.post('/pay/:shortId', async (req, res) => {
    const shortId = req.params.shortId;
    const form = (req.body ?? {}) as Record<string, unknown>;
    try {
      const frontend = frontendOfForm(form, { link: `${config.publicBaseUrl}/pay/${encodeURIComponent(shortId)}`, ip: callerIp(req) });
      const outcome = await payPaymentLink(store, { shortId, form, frontend, now: now() });
      // A link's buyer is not on the merchant's site: the link shows the result on a page of its own,
      // reached by a 303 (Post/Redirect/Get), so that a reload, or Back then Forward, shows the result
      // again instead of posting the form, and paying, again (attacker review, 2026-11-24).
      seeOther(res, `/pay/${encodeURIComponent(shortId)}/orders/${outcome.orderId}`);
    } catch (error) {
      if (error instanceof PageError && error.kind === 'form') {
        return showCheckoutPage(res, 422, async (n) => linkModel(await payableLink(store, shortId, now()), n, echoed(form), error.message));
      }
      sendError(res, error);
    }
  });

  router.get('/pay/:shortId/orders/:orderId', async (req, res) => {
    try {
      const { orderId, result, seller, configuration, link } = await linkOrderResult(store, req.params.shortId, req.params.orderId, now());
      const authorized = result.status === 'Authorized';
      send(
        res,
        200,
        messagePage({
          title: authorized ? 'Payment authorized' : 'Payment denied',
          heading: authorized ? 'Payment authorized' : 'Payment denied',
          text: authorized ? `Thank you. Your order ${orderId} is confirmed.` : `${result.returnMessage}. Your order ${orderId} was not paid; you can try again.`,
          layout: layoutOf(configuration),
          tradeName: seller.tradeName,
          ...(authorized ? {} : { link: { href: `/pay/${encodeURIComponent(link.shortId)}`, label: 'Try again' } }),
        }),
      );
    } catch (error) {
      sendError(res, error);
    }
  });

  // The page addresses' other methods (HEAD is served as its GET).
  router.all('/checkout/:paymentIntentId', methodNotTaken('GET, HEAD'));
  router.all('/checkout/:paymentIntentId/pay', methodNotTaken('POST'));
  router.all('/pay/:shortId', methodNotTaken('GET, HEAD, POST'));
  router.all('/pay/:shortId/orders/:orderId', methodNotTaken('GET, HEAD'));

  // Whatever a page route passes on (refuseUnreadablePageInput's PageError, the body parser's refusals,
  // an error thrown while paying) is a page too.
  router.use(['/checkout', '/pay'], ((error, _req, res, next) => (res.headersSent ? next(error) : sendError(res, error))) as ErrorRequestHandler);

  // Any other address under the pages' prefixes, whatever its case, slashes or encoding: a 404 page
  // (the app's own 404 would answer it in an API's JSON).
  router.use((req, res, next) => (isPageAddress(req.path) ? sendError(res, noSuchPage()) : next()));

  return router;
}
