// HTTP ↔ domain for the sandbox's payment links (reference-only; the admin token is checked before
// this router, as the contract's security says: server/http/security.ts).
import type { AreaRoutes } from '../../http/area-routes.ts';
import { paymentLinkBody } from '../../payment-link/bodies.ts';
import { typedRouter } from '../../http/typed-router.ts';
import { createSandboxPaymentLink } from './service.ts';

export const sandboxPaymentLinkRoutes: AreaRoutes = ({ store }) => {
  return typedRouter().post('/sandbox/v1/payment-links', async (req, res) => {
    res.status(201).json(paymentLinkBody(await createSandboxPaymentLink(store, req.body)));
  }).router;
};
