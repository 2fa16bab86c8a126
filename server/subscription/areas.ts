// The routes of the recurrence areas, mounted by app.ts as one entry.
import type { AreaRoutes } from '../http/area-routes.ts';
import { planRoutes } from '../plan/routes.ts';
import { sandboxPlanRoutes } from '../sandbox/plans.ts';
import { subscriptionWebhookRoutes } from '../subscription-webhook/routes.ts';
import { subscriptionRoutes } from './routes.ts';

export const RECURRENCE_AREAS: AreaRoutes[] = [subscriptionRoutes, planRoutes, subscriptionWebhookRoutes, sandboxPlanRoutes];
