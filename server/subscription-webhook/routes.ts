// Subscription webhook API (HTTP ↔ domain): apply a payment event.
import type { AreaRoutes } from '../http/area-routes.ts';
import { recurrenceTokenOf } from '../authentication/bearer.ts';
import { typedRouter } from '../http/typed-router.ts';
import { applySubscriptionEvent, type SubscriptionEventResult } from './service.ts';

export const subscriptionWebhookRoutes: AreaRoutes = ({ store }) => {
  const api = typedRouter();
  api.patch('/dpm/webhooks/v1/subscriptions/{event_name}/events/{event_id}', async (req, res) => {
    const answer = await applySubscriptionEvent(store, {
      token: recurrenceTokenOf(req),
      eventName: req.params.event_name,
      eventId: req.params.event_id,
      body: req.body,
    });
    // Parsed back from the stored text, so that a replay serialises to the same bytes.
    res.status(200).json(JSON.parse(answer) as SubscriptionEventResult);
  });
  return api.router;
};
