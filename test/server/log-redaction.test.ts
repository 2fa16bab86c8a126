// A careless client puts secrets in the URL (`?client_secret=…`, `?access_token=…`), or arrives
// from a page that had them in its own (`Referer`): the request log, even at trace level, carries
// the URL, the query and the Referer with those values redacted, and the other parameters as sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGGED, MORE_HEADERS, redactReferer, redactUrl, withoutCardNumbers } from '../../server/http/logging.ts';
import { AUTH_BUNDLE, startTestServer, tokenForm, type TestServer } from './support/server.ts';

const SECRETS = {
  client_secret: 'qs-client-secret-1',
  access_token: 'qs-access-token-2',
  Refresh_Token: 'qs-refresh-token-3',
  PASSWORD: 'qs-password-4',
  'api-key': 'qs-api-key-5',
  authorization: 'qs-authorization-6',
  token: 'qs-token-7',
  secret: 'qs-secret-8',
};
const query = new URLSearchParams({ ...SECRETS, scope: 'kept-scope' }).toString();

describe('secrets in request URLs', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The authentication area's bundle, where the key set is outside the contract and answers 200 to any query.
    server = await startTestServer({ config: { apiSpec: AUTH_BUNDLE, logLevel: 'trace' } });
  });
  afterAll(() => server?.close());

  it('never reach the trace-level log, whatever the status', async () => {
    const token = await server.http.post(`/authentication/oauth2/-core/access_token?${query}`).type('form').send(tokenForm());
    const keys = await server.http.get(`/sandbox/v1/jwks?${query}`).set('x-request-id', 'query-secrets');
    const unknown = await server.http.get(`/no/such/path?${query}`);
    // A refusal (unknown query parameters), a success, a path outside the contract: each logs its request.
    expect([token.status, keys.status, unknown.status]).toEqual([400, 200, 404]);
    expect(server.logs.lines.length).toBeGreaterThan(0);
    for (const value of Object.values(SECRETS)) expect(server.logs.text).not.toContain(value);
    const line = server.logs.lines.find((l) => l.req?.id === 'query-secrets' && l.msg === 'request completed');
    expect(line?.req.url).toBe(`/sandbox/v1/jwks?${Object.keys(SECRETS).map((k) => `${k}=[redacted]`).join('&')}&scope=kept-scope`);
    expect(line?.req.query).toEqual({ ...Object.fromEntries(Object.keys(SECRETS).map((k) => [k, '[redacted]'])), scope: 'kept-scope' });
  });

  it('nor does the Referer header: the URL of the page that sent the visitor, redacted the same way', async () => {
    const res = await server.http.get('/sandbox/v1/jwks').set('x-request-id', 'referer-secrets').set('Referer', `https://shop.example/checkout/return?${query}`);
    expect(res.status).toBe(200);
    for (const value of Object.values(SECRETS)) expect(server.logs.text).not.toContain(value);
    const line = server.logs.lines.find((l) => l.req?.id === 'referer-secrets' && l.msg === 'request completed');
    expect(line?.req.headers.referer).toBe(`https://shop.example/checkout/return?${Object.keys(SECRETS).map((k) => `${k}=[redacted]`).join('&')}&scope=kept-scope`);
    // The request itself keeps its header as sent (the log works on a copy).
    expect(line?.req.headers['x-request-id']).toBe('referer-secrets');
  });

  it('nor do secret-named headers other than Authorization', async () => {
    const res = await server.http
      .get('/sandbox/v1/jwks')
      .set('x-request-id', 'header-secrets')
      .set('Proxy-Authorization', 'Basic cHJveHktc2VjcmV0LTk=')
      .set('X-Api-Key', 'header-api-key-10')
      .set('X-Auth-Token', 'header-auth-token-11')
      .set('Ocp-Apim-Subscription-Key', 'header-subscription-key-12')
      .set('username', 'maria');
    expect(res.status).toBe(200);
    for (const value of ['cHJveHktc2VjcmV0LTk=', 'header-api-key-10', 'header-auth-token-11', 'header-subscription-key-12']) expect(server.logs.text).not.toContain(value);
    const line = server.logs.lines.find((l) => l.req?.id === 'header-secrets' && l.msg === 'request completed');
    expect(line?.req.headers).toMatchObject({
      'proxy-authorization': '[redacted]',
      'x-api-key': '[redacted]',
      'x-auth-token': '[redacted]',
      'ocp-apim-subscription-key': '[redacted]',
      'x-request-id': 'header-secrets',
      username: 'maria', // the contract's own header stays readable
    });
  });

  it("nor do ';' parameters inside a query value (Express splits on '&' only)", async () => {
    const res = await server.http.get('/sandbox/v1/jwks?status=ACTIVE;token=SEMI-SECRET-13;page=2').set('x-request-id', 'semicolon-secrets');
    expect(res.status).toBe(200); // the key set, outside this bundle, answers any query
    expect(server.logs.text).not.toContain('SEMI-SECRET-13');
    const line = server.logs.lines.find((l) => l.req?.id === 'semicolon-secrets' && l.msg === 'request completed');
    expect(line?.req.query).toEqual({ status: 'ACTIVE;token=[redacted];page=2' });
  });

  it('nor do card numbers under names no rule knows, or in the path and other headers (attacker review: `?cc=` was logged)', async () => {
    const cards = ['4111111111111111', '5555 5555 5555 4444', '3782-822463-10005'];
    const res = await server.http
      .get(`/sandbox/v1/jwks?cc=${cards[0]}&ccnum=${encodeURIComponent(cards[1]!)}&n=${cards[2]}&page=2&since=2026-11-24&ref=4111111111111112`)
      .set('x-request-id', 'card-numbers')
      .set('x-note', `card ${cards[1]} exp 12/30`);
    expect(res.status).toBe(200);
    const path = await server.http.get(`/dpy/payment-link/v1/payment-links/by-short-id/${cards[0]}`).set('x-request-id', 'card-in-path');
    expect(path.status).toBe(404);
    // Whole, as sent and as digits only (a part such as `5555` may be in a line's own timestamp).
    for (const card of cards) for (const spelling of [card, encodeURIComponent(card), card.replace(/\D/g, '')]) expect(server.logs.text).not.toContain(spelling);
    const line = server.logs.lines.find((l) => l.req?.id === 'card-numbers' && l.msg === 'request completed');
    // The other values stay as sent: a date, and 16 digits that fail Luhn, are not card numbers.
    expect(line?.req.url).toBe('/sandbox/v1/jwks?cc=[redacted]&ccnum=[redacted]&n=[redacted]&page=2&since=2026-11-24&ref=4111111111111112');
    expect(line?.req.query).toEqual({ cc: '[redacted]', ccnum: '[redacted]', n: '[redacted]', page: '2', since: '2026-11-24', ref: '4111111111111112' });
    expect(line?.req.headers['x-note']).toBe('card [redacted] exp 12/30');
    const pathLine = server.logs.lines.find((l) => l.req?.id === 'card-in-path' && l.msg === 'request completed');
    expect(pathLine?.req.url).toBe('/dpy/payment-link/v1/payment-links/by-short-id/[redacted]');
  });

  it('nor does a card number in an integer parameter, which the validator reads as a number (re-attack review)', async () => {
    const platform = await startTestServer({ config: { logLevel: 'trace' } }); // the whole contract: its integer parameters
    try {
      const token = (await platform.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm())).body.access_token;
      const res = await platform.http.get('/dpy/payment-link/v1/payment-links?limit=4111111111111111&page=2').set('Authorization', `Bearer ${token}`).set('x-request-id', 'card-as-number');
      expect(res.status).toBe(400);
      const line = platform.logs.lines.find((l) => l.req?.id === 'card-as-number' && l.msg === 'request completed');
      expect(line?.req.url).toBe('/dpy/payment-link/v1/payment-links?limit=[redacted]&page=2');
      expect(line?.req.query).toMatchObject({ limit: '[redacted]', page: 2 }); // read as numbers: the card number's redacted, the page kept
      expect(platform.logs.text).not.toContain('4111111111111111');
    } finally {
      await platform.close();
    }
  });

  it('nor does a card number as a header name, or as the x-request-id, which is then not taken (it is echoed and bound to every line)', async () => {
    const before = server.logs.lines.length;
    const res = await server.http.get('/sandbox/v1/jwks').set('x-request-id', '5555555555554444').set('4111111111111111', 'x');
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const logged = server.logs.lines.slice(before).map((line) => JSON.stringify(line)).join('\n');
    expect(logged).toContain(res.headers['x-request-id']);
    expect(logged).not.toContain('5555555555554444');
    expect(logged).not.toContain('4111111111111111');
    // In the punctuation a request id may hold (`.`, `_`, `:`), a card number is still one.
    for (const given of ['4111.1111.1111.1111', '4111_1111_1111_1111', '5555:5555:5555:4444', 'order-4111.1111.1111.1111', '4111.1111-1111.1111', '2026.4111-1111-1111-1111', 'deadbeef-dead-beef-dead-4111111111111111']) {
      const punctuated = await server.http.get('/sandbox/v1/jwks').set('x-request-id', given);
      expect(punctuated.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    // A request id that holds no card number is taken as it is.
    for (const given of ['req.2026-11-25:0001', '10.0.0.1:8080', 'trace_4111.1111.1111.1112']) {
      expect((await server.http.get('/sandbox/v1/jwks').set('x-request-id', given)).headers['x-request-id']).toBe(given);
    }
    const later = server.logs.lines.slice(before).map((line) => JSON.stringify(line)).join('\n');
    for (const card of ['4111.1111.1111.1111', '4111_1111_1111_1111', '5555:5555:5555:4444']) expect(later).not.toContain(card);
    expect(later).toContain('trace_4111.1111.1111.1112');
  });
});

describe('the size of a logged request', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: AUTH_BUNDLE, logLevel: 'warn' } });
  });
  afterAll(() => server?.close());

  /** Everything a line may carry of a request, and ~1 KB for the rest (the response's headers, the level, the time). */
  const MAX_LINE = LOGGED.url + LOGGED.headers + LOGGED.query + LOGGED.params + 1_024;
  const lineOf = (id: string) => {
    const line = server.logs.lines.find((l) => l.req?.id === id && l.msg === 'request completed');
    if (!line) throw new Error(`no log line for the request ${id}`);
    return line;
  };

  it('is bounded whatever the caller sends: long header values, many headers and a long URL are cut, saying how much', async () => {
    // An unauthenticated 404 is logged (at warn): near Node's 16 KiB of request head, a 5,000-character URL among them.
    let request = server.http.get(`/no/such/path?title=${'a'.repeat(5_000)}&client_secret=${'s'.repeat(100)}`).set('x-request-id', 'huge').set('x-junk', 'j'.repeat(6_000));
    for (let i = 0; i < 12; i++) request = request.set(`x-filler-${i}`, 'f'.repeat(300));
    const res = await request;
    expect(res.status).toBe(404);
    const line = lineOf('huge');
    expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThan(MAX_LINE);
    expect(line.req.url).toBe(`/no/such/path?title=${'a'.repeat(LOGGED.url - '/no/such/path?title='.length)}…[${5_000 + 20 + '&client_secret=[redacted]'.length - LOGGED.url} more characters]`);
    expect(line.req.query).toMatch(/^\[\d+ bytes, not logged: see url\]$/);
    expect(line.req.headers['x-junk']).toBe(`${'j'.repeat(LOGGED.headerValue)}…[${6_000 - LOGGED.headerValue} more characters]`);
    expect(line.req.headers['x-request-id']).toBe('huge'); // a short header, as sent
    expect(line.req.headers[MORE_HEADERS]).toMatch(/^\d+ not logged$/);
    expect(Object.keys(line.req.headers).filter((name) => name.startsWith('x-filler-')).length).toBeLessThan(12);
    expect(server.logs.text).not.toContain('s'.repeat(100)); // redacted before it was cut
  });

  it('is bounded in bytes: escaped, non-ASCII and many empty headers, and a long path parameter', async () => {
    const send = async (id: string, request: ReturnType<typeof server.http.get>) => {
      await request.set('x-request-id', id);
      return lineOf(id);
    };
    let quotes = server.http.get('/no/such/path');
    for (let i = 0; i < 7; i++) quotes = quotes.set(`x-quote-${i}`, '"'.repeat(512)); // each " is two bytes of JSON
    let latin = server.http.get('/no/such/path');
    for (let i = 0; i < 7; i++) latin = latin.set(`x-latin-${i}`, Buffer.from('ÿ'.repeat(512), 'latin1').toString('latin1')); // two bytes of UTF-8 each
    let empty = server.http.get('/no/such/path');
    for (let i = 0; i < 900; i++) empty = empty.set(`x-e${i}`, '');
    for (const line of [await send('quotes', quotes), await send('latin', latin), await send('empty', empty)]) {
      expect(Buffer.byteLength(JSON.stringify(line.req.headers))).toBeLessThanOrEqual(LOGGED.headers + 200);
      expect(line.req.headers[MORE_HEADERS]).toMatch(/^\d+ not logged$/);
      expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThan(MAX_LINE);
    }
    // A hosted page's id, decoded into the path's parameters (%22 is one character and two bytes of JSON).
    const page = await server.http.get(`/checkout/${'%22'.repeat(4_000)}`).set('x-request-id', 'long-param');
    expect(page.status).toBe(404);
    const line = lineOf('long-param');
    expect(line.req.params).toMatch(/^\[\d+ bytes, not logged: see url\]$/);
    expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThan(MAX_LINE);
  });

  it("redacts a Referer's credentials before cutting it: no part of the password is logged", async () => {
    const res = await server.http.get('/no/such/path').set('x-request-id', 'long-referer').set('Referer', `https://user:${'p'.repeat(600)}@shop.example/back`);
    expect(res.status).toBe(404);
    expect(lineOf('long-referer').req.headers.referer).toBe('https://[redacted]@shop.example/back');
    expect(server.logs.text).not.toContain('ppppp');
  });

  it('is unchanged for an ordinary request', async () => {
    const res = await server.http.get('/no/such/path?title=Caf%C3%A9').set('x-request-id', 'ordinary').set('user-agent', 'merchant-test/1.0');
    expect(res.status).toBe(404);
    const line = lineOf('ordinary');
    expect(line.req.url).toBe('/no/such/path?title=Caf%C3%A9');
    expect(line.req.headers).toMatchObject({ 'x-request-id': 'ordinary', 'user-agent': 'merchant-test/1.0' });
    expect(line.req.headers).not.toHaveProperty([MORE_HEADERS]);
  });
});

describe('redactUrl', () => {
  it.each([
    ['/a?client_secret=s3cr3t&page=2', '/a?client_secret=[redacted]&page=2'],
    ['/a?CLIENT_SECRET=s&Access_Token=t', '/a?CLIENT_SECRET=[redacted]&Access_Token=[redacted]'],
    ['/a?client%5Fsecret=s', '/a?client%5Fsecret=[redacted]'],
    ['/a?x_api_key=k&apikey=k&key=k&monkey=m', '/a?x_api_key=[redacted]&apikey=[redacted]&key=[redacted]&monkey=m'],
    ['/a?access_token', '/a?access_token=[redacted]'],
    ['/a?title=Caf%C3%A9&page=1', '/a?title=Caf%C3%A9&page=1'],
    ['/pay/x?card_number=4111111111111111&security_code=123&expiry=12/30&cvv=999&page=1', '/pay/x?card_number=[redacted]&security_code=[redacted]&expiry=[redacted]&cvv=[redacted]&page=1'],
    ['/a?a=1;token=t;b=2', '/a?a=1;token=[redacted];b=2'],
    // A card number, however written and under any name: 12 to 19 digits passing Luhn, in groups.
    ['/a?cc=4111111111111111&x=4111+1111+1111+1111&y=4111%201111%201111%201111', '/a?cc=[redacted]&x=[redacted]&y=[redacted]'],
    ['/a?n=378282246310005&m=5555-5555-5555-4444&p=4111111111111111,1', '/a?n=[redacted]&m=[redacted]&p=[redacted],1'],
    ['/a/4111111111111111/b?4111111111111111', '/a/[redacted]/b?[redacted]'],
    // Not one: Luhn fails, too short, too long, part of a longer run, or groups that only make one with the digits before them.
    ['/a?x=4111111111111112&y=41111111111&z=41111111111111111111&w=24111111111111111', '/a?x=4111111111111112&y=41111111111&z=41111111111111111111&w=24111111111111111'],
    ['/a?id=9-4111-1111-1111-1111-9&c=4111 1111 1111 1111 123', '/a?id=[redacted]&c=[redacted]'],
    // Separators as the hosted page's form drops them: any amount of white space or dashes, encoded or not.
    ['/a?a=4111++1111++1111++1111&b=4111%09%091111%0A1111%0D%0A1111&c=4111%2B1111%2B1111%2B1111&d=4111 -\t1111--1111  1111', '/a?a=[redacted]&b=[redacted]&c=[redacted]&d=[redacted]'],
    ['/a?v=4111%0B1111%0c1111%0B1111&n=4111%C2%A01111%c2%a01111%C2%A01111', '/a?v=[redacted]&n=[redacted]'],
    // The other white space JavaScript's \s (the hosted form's) drops, in UTF-8 (re-attack review).
    ['/a?i=4111%E3%80%801111%e3%80%801111%E3%80%801111&e=4111%E2%80%811111%E2%80%AF1111%E2%81%9F1111&f=4111%EF%BB%BF1111%E1%9A%801111%E2%80%A81111', '/a?i=[redacted]&e=[redacted]&f=[redacted]'],
    // Percent-encoded digits and dashes, and a card number inside an encoded URL, are the same card number.
    ['/a/%34111111111111111?q=%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31&d=4111%2D1111%2D1111%2D1111', '/a/[redacted]?q=[redacted]&d=[redacted]'],
    ['/a?next=%2Fpay%3Fcc%3D4111111111111111', '/a?next=%2Fpay%3Fcc%3D[redacted]'],
    // Groups of at least four digits split by punctuation, encoded or not (one mark between groups).
    ['/a?a=4111.1111.1111.1111&b=4111_1111_1111_1111&c=4111/1111/1111/1111&d=5555,5555,5555,4444', '/a?a=[redacted]&b=[redacted]&c=[redacted]&d=[redacted]'],
    ['/a?a=4111%2F1111%2F1111%2F1111&b=4111%2c1111%2C1111%2c1111&c=4111%2E1111%2e1111%2E1111&d=%34111.1111.1111.1111', '/a?a=[redacted]&b=[redacted]&c=[redacted]&d=[redacted]'],
    ['/a?a=4111:1111:1111:1111&b=4111%3A1111%3a1111%3A1111', '/a?a=[redacted]&b=[redacted]'],
    ['/a/4111.1111.1111.1111/b?x=1,4111.1111.1111.1111', '/a/[redacted]/b?x=1,[redacted]'],
    // Whichever way its neighbours are split, and with both kinds of break (re-attack review: the first
    // of these were redacted, then not, while punctuation had a pattern of its own).
    ['/a?a=2026/4111 1111 1111 1111&b=1234:4111-1111-1111-1111&c=v1.2026.4111%201111%201111%201111&d=1000,4111-1111-1111-1111', '/a?a=2026/[redacted]&b=1234:[redacted]&c=v1.2026.[redacted]&d=[redacted]'],
    ['/cards/2026/4111-1111-1111-1111?e=20261125_4111 1111 1111 1111&f=2026%2F4111%201111%201111%201111', '/cards/2026/[redacted]?e=20261125_[redacted]&f=2026%2F[redacted]'],
    ['/a?m=4111.1111-1111.1111&n=4111.1111 1111 1111&o=4111 1111 1111.1111&p=4111.1111.1111.111', '/a?m=[redacted]&n=[redacted]&o=[redacted]&p=4111.1111.1111.111'],
    // Not one: addresses, versions and dates (groups under four digits), two marks in a row, Luhn failing,
    // and punctuation between groups of other lengths: timestamps with a fraction, lists of ids.
    ['/a?ip=192.168.100.200&v=1.22.333.4444&d=2026/11/25&e=4111..1111..1111..1111&f=4111.1111.1111.1112', '/a?ip=192.168.100.200&v=1.22.333.4444&d=2026/11/25&e=4111..1111..1111..1111&f=4111.1111.1111.1112'],
    ['/a?t=2026-11-25T12:30:45Z&h=[2001:db8::4111]:8080&p=127.0.0.1:4111', '/a?t=2026-11-25T12:30:45Z&h=[2001:db8::4111]:8080&p=127.0.0.1:4111'],
    ['/a?t=20261125.1200&u=1700000000000.1234&w=1732500000.123456&ids=411111,111111,111111,100000&x=1700000000000:4111', '/a?t=20261125.1200&u=1700000000000.1234&w=1732500000.123456&ids=411111,111111,111111,100000&x=1700000000000:4111'],
    // Ids stay findable: a UUID's groups and the digits inside a word or a hex digest are no card number.
    ['/s/a1d92eff-6894-4652-8192-42dda88b852d/x4111111111111111y?h=ab5555555555554444cd', '/s/a1d92eff-6894-4652-8192-42dda88b852d/x4111111111111111y?h=ab5555555555554444cd'],
    // But only a whole UUID: a run of digits whose escapes hold A-F, or a card number after a UUID's first groups, is looked at (re-attack review).
    ['/a?m=20261125-4111%C2%A01111%C2%A01111%C2%A01111&n=41111111-1111%2D1111&r=deadbeef-dead-beef-dead-4111111111111111', '/a?m=[redacted]&n=[redacted]&r=deadbeef-dead-beef-dead-[redacted]'],
    ['/a?d=2026-11-24&t=1700000000000&phone=%2B55%2011%2091234-5678', '/a?d=2026-11-24&t=1700000000000&phone=%2B55%2011%2091234-5678'],
    // Every query parameter the contract has stays readable.
    [
      '/a?created_at_end=1&created_at_start=2&expand=3&expiration_end=4&expiration_start=5&limit=6&page=7&payment_type=8&seller_id=9&sort=10&sort_type=11&status=12&title=13',
      '/a?created_at_end=1&created_at_start=2&expand=3&expiration_end=4&expiration_start=5&limit=6&page=7&payment_type=8&seller_id=9&sort=10&sort_type=11&status=12&title=13',
    ],
    ['/a', '/a'],
  ])('%s is logged as %s', (url, logged) => {
    expect(redactUrl(url)).toBe(logged);
  });
});

it('looks for card numbers in time linear in the text: 200 KB of encoded spaces, whose digits are each a start', () => {
  // A complexity guard, not a speed measure: the unbounded separator run took ~66 ms for 16 KB and
  // grew with the square of the length (~10 s here); bounded, this is a few milliseconds.
  const punctuated = ['1111.'.repeat(40_000) + 'x', `${'%31'.repeat(4)}%2E`.repeat(13_000) + 'x', '1'.repeat(200_000) + 'x', '%31'.repeat(70_000) + 'x'];
  for (const hostile of ['%20'.repeat(70_000), '%09'.repeat(70_000), `4${' '.repeat(8)}1`.repeat(20_000), ...punctuated]) {
    const started = performance.now();
    withoutCardNumbers(hostile);
    expect(performance.now() - started).toBeLessThan(1_000);
  }
});

describe('redactReferer', () => {
  it.each([
    ['https://shop.example/cb#access_token=SECRET1&state=x', 'https://shop.example/cb'],
    ['https://shop.example/cb?x=1#access_token=SECRET2', 'https://shop.example/cb?x=1'],
    ['https://user:SECRET5@shop.example/a?token=SECRET6&page=2', 'https://[redacted]@shop.example/a?token=[redacted]&page=2'],
    ['https://user:p@ss-w0rd@shop.example/', 'https://[redacted]@shop.example/'],
    ['//user:pw@shop.example/a', '//[redacted]@shop.example/a'],
    ['https:\\\\user:pw@shop.example/a', 'https:\\\\[redacted]@shop.example/a'],
    ['https://shop.example/a?next=user@example.com', 'https://shop.example/a?next=user@example.com'],
    ['https://shop.example/checkout?card_number=5555555555554444&cvv=999', 'https://shop.example/checkout?card_number=[redacted]&cvv=[redacted]'],
    ['http:user:S1@shop.example/', 'http:[redacted]@shop.example/'],
    ['http:/user:S2@shop.example/', 'http:/[redacted]@shop.example/'],
    ['http:///user:S3@shop.example/', 'http:///[redacted]@shop.example/'],
    ['https://shop.example/cb?sig=S4&code=S5&access_key=S6&expiration_month=08&expiration_year=29&number=4111', 'https://shop.example/cb?sig=[redacted]&code=[redacted]&access_key=[redacted]&expiration_month=[redacted]&expiration_year=[redacted]&number=[redacted]'],
    ['https://shop.example/a?next=%2Fb&title=Caf%C3%A9', 'https://shop.example/a?next=%2Fb&title=Caf%C3%A9'],
    ['not a url at all', 'not a url at all'],
    ['', ''],
  ])('%s is logged as %s', (referer, logged) => {
    expect(redactReferer(referer)).toBe(logged);
  });
});
