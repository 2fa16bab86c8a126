// HTTP ↔ domain for the sandbox's sellers and payment links (reference-only; the admin token is
// checked before this router, as the contract's security says: server/http/security.ts).
import type { AreaRoutes } from '../http/area-routes.ts';
import { paymentLinkBody, sellerBody } from '../payment-link/bodies.ts';
import { typedRouter } from '../http/typed-router.ts';
import { createSandboxPaymentLink } from './payment-links/service.ts';
import { createSandboxSeller } from './sellers/service.ts';

export const sandboxSellerAndLinkRoutes: AreaRoutes = ({ store }) => {
  return typedRouter()
    .post('/sandbox/v1/sellers', async (req, res) => {
      const { seller, credentials } = await createSandboxSeller(store, req.body);
      res.status(201).json({ seller: sellerBody(seller), credentials });
    })
    .post('/sandbox/v1/payment-links', async (req, res) => {
      res.status(201).json(paymentLinkBody(await createSandboxPaymentLink(store, req.body)));
    }).router;
};
