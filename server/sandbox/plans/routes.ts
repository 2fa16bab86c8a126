// HTTP ↔ domain for the sandbox's plans (reference-only; the admin token is checked before this
// router, by the contract's security).
import type { AreaRoutes } from '../../http/area-routes.ts';
import { typedRouter } from '../../http/typed-router.ts';
import { presentPlan } from '../../plan/service.ts';
import { createSandboxPlan } from './service.ts';

export const sandboxPlanRoutes: AreaRoutes = ({ store }) => {
  const api = typedRouter();
  api.post('/sandbox/v1/plans', async (req, res) => {
    res.status(201).json(presentPlan(await createSandboxPlan(store, req.body)));
  });
  return api.router;
};
