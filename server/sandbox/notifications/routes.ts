// HTTP ↔ domain for the sandbox's merchant notification delivery log (reference-only; the admin
// token is checked before this router): list a seller's deliveries a page at a time, read one, send
// one again.
import type { AreaRoutes } from '../../http/area-routes.ts';
import { ApiError } from '../../http/errors.ts';
import { typedRouter } from '../../http/typed-router.ts';
import { notificationRepository } from '../../notifications/repository.ts';
import { webCheckoutRepository } from '../../web-checkout/repository.ts';
import { DELIVERY_NOT_FOUND, withAttempts } from './service.ts';

export const sandboxNotificationRoutes: AreaRoutes = ({ store }) => {
  const repository = notificationRepository(store);
  return typedRouter()
    .get('/sandbox/v1/notifications', async (req, res) => {
      const sellerId = req.query.seller_id;
      if (!(await webCheckoutRepository(store).findSeller(sellerId))) throw new ApiError(404, 'seller_not_found', 'Seller not found');
      const { limit = 100, before, status } = req.query;
      const page = await repository.pageForSeller(sellerId, { limit, before, status });
      if (!page) throw DELIVERY_NOT_FOUND();
      res.status(200).json({ deliveries: await Promise.all(page.deliveries.map((d) => withAttempts(store, d))), has_more: page.hasMore });
    })
    .get('/sandbox/v1/notifications/{delivery_id}', async (req, res) => {
      const found = await repository.findById(req.params.delivery_id);
      if (!found) throw DELIVERY_NOT_FOUND();
      res.status(200).json(await withAttempts(store, found));
    })
    .post('/sandbox/v1/notifications/{delivery_id}/redeliver', async (req, res) => {
      // Read back in the transaction that made it due: the workers hear of it once it commits (the
      // announcement waits for the commit), so the answer is the delivery as queued, `pending`,
      // never one a worker already claimed or attempted again.
      const queued = await store.transaction(async (tx) => {
        const inTx = notificationRepository(tx);
        const found = await inTx.findById(req.params.delivery_id);
        if (!found || !(await inTx.redeliver(found.seller_id, found.delivery_id, new Date()))) return undefined;
        return withAttempts(tx, (await inTx.findById(found.delivery_id))!);
      });
      if (!queued) throw DELIVERY_NOT_FOUND();
      res.status(202).json(queued);
    }).router;
};
