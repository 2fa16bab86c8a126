// HTTP ↔ domain for the web checkout: the seller always comes from the access token, never the body.
import type { AreaRoutes } from '../http/area-routes.ts';
import { accessTokenOf } from '../authentication/bearer.ts';
import { typedRouter } from '../http/typed-router.ts';
import { webCheckoutRepository } from './repository.ts';
import { paymentIntentService } from './service.ts';
import { technicalConfigurationService } from './technical-configuration.ts';

export const webCheckoutRoutes: AreaRoutes = ({ store, config, resolveHostName }) => {
  const paymentIntents = paymentIntentService(webCheckoutRepository(store), { publicBaseUrl: config.publicBaseUrl });
  const technicalConfigurations = technicalConfigurationService(store, { allowPrivateNotificationUrls: config.allowPrivateNotificationUrls, resolveHostName });

  return typedRouter()
    .post('/dpy/web-checkout/v1/payment-intent', async (req, res) => {
      const intent = await paymentIntents.createPaymentIntent(accessTokenOf(req).sellerId, req.body);
      res.status(201).json(intent);
    })
    .patch('/dpy/web-checkout/v1/technical-configurations', async (req, res) => {
      res.json(await technicalConfigurations.updateTechnicalConfiguration(accessTokenOf(req).sellerId, req.body));
    }).router;
};
