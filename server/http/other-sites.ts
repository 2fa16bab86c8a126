// Requests a browser sends for a page of another site: a form post or a no-cors fetch needs no
// CORS preflight, so a web page the developer visits can make the sandbox act (it cannot read the
// answer: the sandbox sends no CORS headers). Used by the hosted pages' payment forms and by the
// token endpoints, which take such a form too; each refuses in its own words.
import type { Request } from 'express';

/**
 * The origins a page of this sandbox has: PUBLIC_BASE_URL's (the redirect_url host), or the host
 * the browser asked for, in either scheme.
 */
export function ownOrigins(publicBaseUrl: string): (hostHeader: string | undefined) => string[] {
  const publicOrigin = new URL(publicBaseUrl).origin;
  return (host) => (host ? [publicOrigin, `http://${host}`, `https://${host}`] : [publicOrigin]);
}

/**
 * Whether a browser sent the request from a page of another site. A browser says where a request
 * comes from in `Sec-Fetch-Site` (any other site, even another port of the same host, is `same-site`
 * or `cross-site`) and in `Origin`. Another site is: `Sec-Fetch-Site` naming one, or `Origin` naming
 * another origin, or `Origin: null` (what a page gets with its own `no-referrer`, or from a sandboxed
 * frame) without `Sec-Fetch-Site: same-origin`. A browser that sends no Fetch Metadata (an address
 * it does not deem secure, plain http to a name other than localhost) is judged on Origin alone. A
 * request without either header (not a browser: curl, a server, a test) is not from another site.
 */
export function fromAnotherSite(req: Request, origins: (hostHeader: string | undefined) => string[]): boolean {
  const site = req.get('sec-fetch-site');
  const origin = req.get('origin');
  if (site === 'cross-site' || site === 'same-site') return true;
  return origin !== undefined && (origin === 'null' ? site !== 'same-origin' : !origins(req.get('host')).includes(origin));
}
