// The hosted pages' Content-Security-Policy: forms go to the sandbox only, on every page whose form's
// answer stays on the sandbox. A page whose answer is a 303 to the merchant has no form-action:
// browsers would apply it to each redirect after the post, the merchant's own ones included.
import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../server/hosted-checkout/pages.ts';

describe('contentSecurityPolicy', () => {
  it('lets forms go to the sandbox only when the page\'s answer does not redirect', () => {
    expect(contentSecurityPolicy('n0nce')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-n0nce'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    );
  });

  it('leaves form-action out of a page whose answer redirects to the merchant, and keeps the rest', () => {
    expect(contentSecurityPolicy('n0nce', true)).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-n0nce'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
    );
  });
});
