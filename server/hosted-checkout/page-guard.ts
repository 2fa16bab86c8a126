// The hosted pages' input that must not reach the store or the router's decoding: an address whose
// percent-encoding does not decode (`/checkout/%ff`), or that is not text once decoded, names no
// page (404); a form field that is not text refuses the form (400) before anything is charged; a
// payment form a browser sent from another site (cross-site request forgery) is refused (403).
// Any other address under the pages' prefixes, in any case or spelling, is a page too: a 404 page,
// or a 405 page for a page's address with a method it does not take, never the API's JSON.
import type { RequestHandler } from 'express';
import { fromAnotherSite } from '../http/other-sites.ts';
import { isText, notTextPointers } from '../http/text.ts';
import { PageError } from './page-error.ts';

export const noSuchPage = () => new PageError(404, 'not_found', 'There is nothing to pay at this address: check the link you were given.');

/**
 * `/checkout` or `/pay` and what is under them, in any case, however many slashes lead, whatever
 * follows that does not make another word of it (`/payment-links` is the API's).
 */
const PAGE_ADDRESS = /^[/\\]+(checkout|pay)(?![a-z0-9_-])/i;

/** Each `%XX` as the byte it names, an escape that is not one left as it is (`%ff` alone does not decode as UTF-8). */
const escapesDecoded = (path: string) => path.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** The path with its dot segments resolved and backslashes read as slashes, as a browser would (`/./checkout` is `/checkout`). */
function resolved(path: string): string {
  try {
    return new URL(path.replace(/^[/\\]+/, '/'), 'http://sandbox.invalid').pathname;
  } catch {
    return path;
  }
}

/** Whether a path is under the pages' prefixes: as sent, with its escapes decoded, or with its dot segments resolved. */
export function isPageAddress(path: string): boolean {
  const decoded = escapesDecoded(path);
  if (PAGE_ADDRESS.test(path) || PAGE_ADDRESS.test(decoded)) return true;
  // Only a path with a dot or a backslash has anything to resolve (most of the API's have neither).
  return /[.\\]/.test(decoded) && (PAGE_ADDRESS.test(resolved(path)) || PAGE_ADDRESS.test(resolved(decoded)));
}

/**
 * A page's address asked with a method it does not take (a GET of a payment form's address, say
 * the result page reloaded from the address bar, or an OPTIONS): 405 with `Allow`, as the API's
 * addresses answer, on a page that says where to go.
 */
export function methodNotTaken(allow: string): RequestHandler {
  return (req, res, next) => {
    res.set('allow', allow);
    next(new PageError(405, 'method', 'This address does not show a page: open the checkout link you were given.'));
  };
}

/** Mounted on `/checkout` and `/pay` after the form parser; the pages' error handler renders its PageError. */
export const refuseUnreadablePageInput: RequestHandler = (req, _res, next) => {
  let path: string;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    return next(noSuchPage());
  }
  if (!isText(path)) return next(noSuchPage());
  if (notTextPointers(req.body).length) {
    return next(new PageError(400, 'form', 'The form holds control characters or other characters that are not text: remove them and send it again.'));
  }
  next();
};

/**
 * A payment form is posted by the page that shows it, so from the sandbox's own origin (the pages
 * send `Referrer-Policy: same-origin`, so their own posts carry their origin). A post a browser sent
 * from another site (http/other-sites.ts) is refused before its body is read, so no order, charge or
 * notification comes of it.
 */
export function refuseCrossSiteForms(origins: (hostHeader: string | undefined) => string[]): RequestHandler {
  return (req, _res, next) => {
    if (req.method !== 'POST' || !fromAnotherSite(req, origins)) return next();
    next(new PageError(403, 'cross_site', 'This payment form was sent from another site, so nothing was charged. Open the checkout link you were given and pay on its page.'));
  };
}
