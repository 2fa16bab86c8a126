// HTTP ↔ domain for the sandbox's merchant notification delivery log (reference-only; the admin
// token is checked before this router): list a seller's deliveries, read one, send one again.
import type { AreaRoutes } from '../http/area-routes.ts';
import type { components } from '../http/contract.ts';
import { ApiError } from '../http/errors.ts';
import { typedRouter } from '../http/typed-router.ts';
import { notificationRepository, type AttemptRow, type DeliveryRow } from '../notifications/repository.ts';
import type { Queryable } from '../store/store.ts';
import { webCheckoutRepository } from '../web-checkout/repository.ts';

type Delivery = components['schemas']['SandboxNotificationDelivery'];

const DELIVERY_NOT_FOUND = () => new ApiError(404, 'delivery_not_found', 'Notification delivery not found');
const iso = (value: Date | string) => new Date(value).toISOString();

/** The delivery as the contract shows it: next_attempt_at only while pending, delivered_at once delivered. */
export function deliveryBody(d: DeliveryRow, attempts: AttemptRow[]): Delivery {
  return {
    delivery_id: d.delivery_id,
    seller_id: d.seller_id,
    event: d.event as Delivery['event'],
    mode: d.mode as Delivery['mode'],
    status: d.status,
    ...(d.status === 'pending' ? { next_attempt_at: iso(d.next_attempt_at) } : {}),
    created_at: iso(d.created_at),
    ...(d.status === 'delivered' && d.delivered_at ? { delivered_at: iso(d.delivered_at) } : {}),
    payload: d.payload as Delivery['payload'],
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: iso(a.started_at),
      ...(a.url !== null ? { url: a.url } : {}),
      ...(a.status_code !== null ? { status_code: a.status_code } : {}),
      latency_ms: a.latency_ms,
      ...(a.error !== null ? { error: a.error } : {}),
    })),
  };
}

async function withAttempts(db: Queryable, d: DeliveryRow): Promise<Delivery> {
  return deliveryBody(d, await notificationRepository(db).attemptsOf(d.delivery_id));
}

export const sandboxNotificationRoutes: AreaRoutes = ({ store }) => {
  const repository = notificationRepository(store);
  return typedRouter()
    .get('/sandbox/v1/notifications', async (req, res) => {
      const sellerId = req.query.seller_id;
      if (!(await webCheckoutRepository(store).findSeller(sellerId))) throw new ApiError(404, 'seller_not_found', 'Seller not found');
      const deliveries = await repository.listForSeller(sellerId);
      res.status(200).json({ deliveries: await Promise.all(deliveries.map((d) => withAttempts(store, d))) });
    })
    .get('/sandbox/v1/notifications/{delivery_id}', async (req, res) => {
      const found = await repository.findById(req.params.delivery_id);
      if (!found) throw DELIVERY_NOT_FOUND();
      res.status(200).json(await withAttempts(store, found));
    })
    .post('/sandbox/v1/notifications/{delivery_id}/redeliver', async (req, res) => {
      const found = await repository.findById(req.params.delivery_id);
      if (!found || !(await repository.redeliver(found.seller_id, found.delivery_id, new Date()))) throw DELIVERY_NOT_FOUND();
      res.status(202).json(await withAttempts(store, (await repository.findById(found.delivery_id))!));
    }).router;
};
