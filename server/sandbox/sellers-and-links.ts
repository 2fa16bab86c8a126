// HTTP ↔ domain for the sandbox's sellers and payment links (reference-only, admin token).
import type { AreaRoutes } from '../app.ts';
import { paymentLinkBody, sellerBody } from '../payment-link/bodies.ts';
import { typedRouter } from '../http/typed-router.ts';
import { requireSandboxAdmin } from './admin.ts';
import { createSandboxPaymentLink } from './payment-links/service.ts';
import { createSandboxSeller } from './sellers/service.ts';

export const sandboxSellerAndLinkRoutes: AreaRoutes = ({ store, config }) => {
  const admin = requireSandboxAdmin(config.sandboxAdminToken);
  return typedRouter()
    .post('/sandbox/v1/sellers', admin, async (req, res) => {
      const { seller, credentials } = await createSandboxSeller(store, req.body);
      res.status(201).json({ seller: sellerBody(seller), credentials });
    })
    .post('/sandbox/v1/payment-links', admin, async (req, res) => {
      res.status(201).json(paymentLinkBody(await createSandboxPaymentLink(store, req.body)));
    }).router;
};
