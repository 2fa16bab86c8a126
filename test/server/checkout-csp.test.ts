// The hosted pages' Content-Security-Policy: forms go to the sandbox, and to the origins its answer
// may redirect the browser to (the merchant's success and error URLs), spelled as CSP sources.
import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../server/hosted-checkout/pages.ts';

const formAction = (redirects?: string[]) => /; form-action ([^;]*)$/.exec(contentSecurityPolicy('n0nce', redirects))?.[1];

describe('contentSecurityPolicy', () => {
  it('lets forms go to the sandbox only when the page redirects nowhere', () => {
    expect(contentSecurityPolicy('n0nce')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-n0nce'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    );
  });

  it('adds each redirect\'s origin once: scheme, host and port, no path or query', () => {
    expect(formAction(['https://www.lojaaurora.com.br/checkout/sucesso?payment_intent_id=1', 'https://www.lojaaurora.com.br/checkout/erro?payment_intent_id=1']))
      .toBe("'self' https://www.lojaaurora.com.br");
    expect(formAction(['http://127.0.0.1:8443/ok', 'http://[::1]:3000/error'])).toBe("'self' http://127.0.0.1:8443 http://[::1]:3000");
    // International names in their ASCII form, as the browser compares them.
    expect(formAction(['https://café.example/ok'])).toBe("'self' https://xn--caf-dma.example");
  });

  it('leaves form-action out where CSP cannot spell an origin, rather than break the redirect', () => {
    // `;` and `,` are allowed in a URL's host and end a CSP directive or policy; `_` is not a CSP host character.
    for (const url of ['http://shop_1.example/ok', 'http://a;script-src.example/ok', 'http://a,b.example/ok']) {
      expect(contentSecurityPolicy('n0nce', [url]), url).not.toContain('form-action');
      expect(contentSecurityPolicy('n0nce', [url]).split(';').map((d) => d.trim().split(' ')[0])).toEqual(['default-src', 'style-src', 'script-src', 'img-src', 'base-uri', 'frame-ancestors']);
    }
  });
});
