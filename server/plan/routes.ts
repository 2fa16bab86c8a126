// Plan API (HTTP ↔ domain): activate or deactivate a plan of the token's seller.
import type { AreaRoutes } from '../http/area-routes.ts';
import { recurrenceTokenOf } from '../authentication/bearer.ts';
import { typedRouter } from '../http/typed-router.ts';
import { presentPlan, updatePlanStatus } from './service.ts';

export const planRoutes: AreaRoutes = ({ store }) =>
  typedRouter().patch('/rpy/be-plan/v1/plans/{plan_id}/status/{status}', async (req, res) => {
    const { plan_id: planId, status } = req.params;
    const plan = await updatePlanStatus(store, { token: recurrenceTokenOf(req), planId, status, username: req.get('username') });
    res.status(200).json(presentPlan(plan));
  }).router;
