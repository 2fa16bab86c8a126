// A sandbox stopped while a merchant's endpoint never answers (a soak review: SIGTERM took 9.5 s to
// stop and 11.3 s to exit, past a container runtime's 10 s, which then kills it and leaves its data
// directory locked): the attempt in flight is cut after the delivery worker's grace, not recorded,
// and made again by the next start on the same data directory.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { afterAll, expect, it } from 'vitest';
import { startSandbox } from '../../server/index.ts';
import { STOP_GRACE_MS } from '../../server/notifications/delivery.ts';
import type { TestServer } from './support/server.ts';
import { cardForm, configureCheckout, createIntent } from './support/checkout.ts';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

it('stops within the delivery grace while a merchant never answers, and the next start delivers what it cut', async () => {
  let answering = false;
  const received: string[] = [];
  const merchant: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.method!);
      if (answering) res.writeHead(200).end('ok'); // else never answers: the attempt waits up to 10 s
    });
  });
  await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(merchant.address() as AddressInfo).port}`;
  const dataDir = join(await mkdtemp(join(tmpdir(), 'sandbox-stop-')), 'data');
  dirs.push(dataDir.replace(/\/data$/, ''));
  try {
    const first = await startSandbox({ dataDir });
    const server = { http: supertest(first.url) } as unknown as TestServer;
    const form = { grant_type: 'client_credentials', client_id: first.seller.clientId, client_secret: first.seller.clientSecret, scope: 'digital-plataform:gateway-api' };
    const token: string = (await server.http.post('/authentication/oauth2/-core/access_token').type('form').send(form)).body.access_token;
    await configureCheckout(server, token, { url });
    const intent = await createIntent(server, token);
    expect((await server.http.post(`/checkout/${intent.payment_intent_id}/pay`).type('form').send(cardForm())).status).toBe(303);
    await expect.poll(() => received.length, { timeout: 5_000, interval: 20 }).toBe(1);
    const asked = Date.now();
    await first.close();
    expect(Date.now() - asked).toBeLessThan(STOP_GRACE_MS + 1_500); // not the attempt's 10 s

    answering = true;
    const second = await startSandbox({ dataDir });
    try {
      await expect.poll(() => received.length, { timeout: 5_000, interval: 20 }).toBe(2);
      const log = await second.admin.GET('/sandbox/v1/notifications', { params: { query: { seller_id: second.seller.sellerId } } } as never);
      const deliveries = (log.data as { deliveries?: Array<{ status: string; attempts: unknown[] }> } | undefined)?.deliveries;
      // The cut attempt was not recorded: the one attempt is the next start's.
      expect(deliveries).toEqual([expect.objectContaining({ status: 'delivered', attempts: [expect.objectContaining({ attempt: 1, status_code: 200 })] })]);
    } finally {
      await second.close();
    }
  } finally {
    await new Promise<void>((resolve) => (merchant.closeAllConnections(), merchant.close(() => resolve())));
  }
});
