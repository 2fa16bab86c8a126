// HTTP ↔ domain for the sandbox's sellers (reference-only; the admin token is checked before this
// router, as the contract's security says: server/http/security.ts).
import type { AreaRoutes } from '../../http/area-routes.ts';
import { sellerBody } from '../../payment-link/bodies.ts';
import { typedRouter } from '../../http/typed-router.ts';
import { createSandboxSeller } from './service.ts';

export const sandboxSellerRoutes: AreaRoutes = ({ store }) => {
  return typedRouter().post('/sandbox/v1/sellers', async (req, res) => {
    const { seller, credentials } = await createSandboxSeller(store, req.body);
    res.status(201).json({ seller: sellerBody(seller), credentials });
  }).router;
};
