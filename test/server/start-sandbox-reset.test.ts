// startSandbox's reset() and close() together, as a test suite calls them: reset() also forgets the
// failed token attempts a test made (a later test's correct secret is not throttled), resets run one
// at a time, close() waits for the one in flight, and a reset() after close() says so.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../server/index.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

const token = (secret: string) =>
  fetch(`${sandbox.url}/authentication/oauth2/-core/access_token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: sandbox.seller.clientId, client_secret: secret, scope: 'digital-plataform:gateway-api' }),
  });

it('forgets the failed token attempts of a test: the correct secret is throttled before reset() and answered after', async () => {
  for (let i = 0; i < 10; i++) expect((await token(`wrong-${i}`)).status).toBe(401);
  const throttled = await token(sandbox.seller.clientSecret);
  expect(throttled.status).toBe(429);
  expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
  await sandbox.reset();
  const answered = await token(sandbox.seller.clientSecret);
  expect(answered.status).toBe(200);
  expect(await answered.json()).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number) });
});

it('lets a reset in flight finish before close() closes the store, and refuses a reset() after close() by name', async () => {
  const own = await startSandbox();
  const link = await own.admin.POST('/sandbox/v1/payment-links', { body: { seller_id: own.seller.sellerId, label: 'Aula', type: 'custom', currency: 'BRL', products: [{ product_type: 'service', title: 'Aula', quantity: 1, amount: 1000 }] } as never });
  expect(link.response.status).toBe(201);
  const resets = [own.reset(), own.reset()];
  await own.close();
  await expect(Promise.all(resets)).resolves.toEqual([undefined, undefined]);
  await expect(own.reset()).rejects.toThrow('The sandbox is closed: reset() cannot run after close()');
});
