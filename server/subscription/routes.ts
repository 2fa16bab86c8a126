// Subscription API (HTTP ↔ domain): create, read, change one installment.
import type { AreaRoutes } from '../http/area-routes.ts';
import { recurrenceTokenOf } from '../authentication/bearer.ts';
import { typedRouter } from '../http/typed-router.ts';
import { createSubscription, getSubscription, RecurrenceProductOff, updateFloatingInstallment } from './service.ts';

/** `?expand=a&expand=b` or `?expand=a`: the validator may hand either form over. */
const listOf = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : value === undefined ? [] : [String(value)]);

export const subscriptionRoutes: AreaRoutes = ({ store }) => {
  const api = typedRouter();

  api.post('/rpy/be-subscription/v1/subscriptions', async (req, res) => {
    const subscription = await createSubscription(store, { token: recurrenceTokenOf(req), body: req.body, username: req.get('username') });
    res.status(201).json(subscription);
  });

  api.get('/rpy/be-subscription/v1/subscriptions/{subscription_id}', async (req, res) => {
    const subscription = await getSubscription(store, {
      token: recurrenceTokenOf(req),
      subscriptionId: req.params.subscription_id,
      expand: listOf(req.query.expand),
    });
    res.status(200).json(subscription);
  });

  api.put('/rpy/be-subscription/v1/subscriptions/{subscriptionId}/floating/installment/{installment}', async (req, res) => {
    const subscriptionId = req.params.subscriptionId;
    try {
      const result = await updateFloatingInstallment(store, {
        token: recurrenceTokenOf(req),
        subscriptionId,
        installment: Number(req.params.installment),
        change: req.body,
        username: req.get('username'),
      });
      res.status(200).json(result);
    } catch (error) {
      // Seed quirk kept by the contract: this 403 has the floating-data shape, not the error body.
      if (error instanceof RecurrenceProductOff) return void res.status(403).json({ subscription_id: subscriptionId, floating_data: [] });
      throw error;
    }
  });

  return api.router;
};
