// HTTP ↔ domain for sandbox test clocks and the sandbox's subscription calls (reference-only; the
// admin token is checked before this router, by the contract's security).
import type { AreaRoutes } from '../../http/area-routes.ts';
import { typedRouter } from '../../http/typed-router.ts';
import { advanceTestClock, cancelSubscription, createTestClock, getTestClock, listSubscriptionCharges } from './service.ts';

export const sandboxTestClockRoutes: AreaRoutes = ({ store, logger }) => {
  return typedRouter()
    .post('/sandbox/v1/test-clocks', async (req, res) => {
      res.status(201).json(await createTestClock(store, req.body));
    })
    .get('/sandbox/v1/test-clocks/{test_clock_id}', async (req, res) => {
      res.status(200).json(await getTestClock(store, req.params.test_clock_id));
    })
    .post('/sandbox/v1/test-clocks/{test_clock_id}/advance', async (req, res) => {
      // A caller that leaves stops the run between two charges (each commits on its own).
      const left = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) left.abort();
      });
      const advanced = await advanceTestClock(store, req.params.test_clock_id, req.body.frozen_time, left.signal);
      if ('stopped' in advanced) {
        logger.warn({ testClockId: req.params.test_clock_id, chargesRun: advanced.chargesRun }, 'Test clock advance stopped: the caller left; the clock keeps its time');
        return;
      }
      const { clock, durationMs } = advanced;
      logger.info({ testClockId: clock.test_clock_id, chargesRun: clock.charges_run, durationMs: Math.round(durationMs) }, 'Test clock advanced');
      res.status(200).json(clock);
    })
    .post('/sandbox/v1/subscriptions/{subscription_id}/cancel', async (req, res) => {
      res.status(200).json(await cancelSubscription(store, req.params.subscription_id));
    })
    .get('/sandbox/v1/subscriptions/{subscription_id}/charges', async (req, res) => {
      res.status(200).json(await listSubscriptionCharges(store, req.params.subscription_id));
    }).router;
};
