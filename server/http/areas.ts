// Which area of the platform a request belongs to, by the base path its path starts with. The area
// decides the shape of every error body of the request.

export type Area =
  | 'token-body-credentials' // POST /authentication/oauth2/-core/access_token (first token form)
  | 'token-basic-credentials' // POST /authentication/oauth2/access_token (second token form)
  | 'payment-link'
  | 'web-checkout'
  | 'subscription'
  | 'plan'
  | 'subscription-webhook'
  | 'sandbox'
  | 'outside'; // no area: answered in the payment link shape (see errors.ts)

/** Most specific first: the two token forms share `/authentication/oauth2/`. */
const BASE_PATHS: ReadonlyArray<readonly [string, Area]> = [
  ['/authentication/oauth2/-core', 'token-body-credentials'],
  ['/authentication/oauth2/access_token', 'token-basic-credentials'],
  ['/dpy/payment-link/v1', 'payment-link'],
  ['/dpy/web-checkout/v1', 'web-checkout'],
  ['/rpy/be-subscription/v1', 'subscription'],
  ['/rpy/be-plan/v1', 'plan'],
  ['/dpm/webhooks/v1', 'subscription-webhook'],
  ['/sandbox/v1', 'sandbox'],
];

/** The area of a request path (no query string); a base path matches whole segments only. */
export function areaOf(path: string): Area {
  for (const [base, area] of BASE_PATHS) {
    if (path === base || path.startsWith(`${base}/`)) return area;
  }
  return 'outside';
}
