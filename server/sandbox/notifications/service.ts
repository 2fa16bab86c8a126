// The sandbox's merchant notification delivery log as the contract shows it.
import type { components } from '../../http/contract.ts';
import { ApiError } from '../../http/errors.ts';
import { notificationRepository, type AttemptRow, type DeliveryRow } from '../../notifications/repository.ts';
import type { Queryable } from '../../store/store.ts';

type Delivery = components['schemas']['SandboxNotificationDelivery'];

export const DELIVERY_NOT_FOUND = () => new ApiError(404, 'delivery_not_found', 'Notification delivery not found');
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

export async function withAttempts(db: Queryable, d: DeliveryRow): Promise<Delivery> {
  return deliveryBody(d, await notificationRepository(db).attemptsOf(d.delivery_id));
}
