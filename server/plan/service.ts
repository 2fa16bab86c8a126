// The rules of recurrence plans: ownership, the debit-in-Brazil rule, status changes.
import type { AccessTokenClaims } from '../authentication/access-tokens.ts';
import type { Store } from '../store/store.ts';
import { recurrenceError } from '../http/recurrence-errors.ts';
import { planRepository, type PlanRepository, type PlanStatus, type StoredPlan } from './repository.ts';

export const PLAN_NOT_FOUND = 'Plan not found';
export const DEBIT_PLAN_IN_BRAZIL = 'Debit plans cannot be activated in Brazil';

/** Debit is not allowed for subscriptions in Brazil, so a BR seller's debit plan cannot be active. */
export function debitPlanBlockedInBrazil(plan: Pick<StoredPlan, 'payment_types'>, status: PlanStatus, country: string): boolean {
  return plan.payment_types === 'debit_card' && status === 'active' && country === 'BR';
}

/** The seller's plan, or 404 `Plan not found` (another seller's plan is unknown). */
export async function planOfSeller(repo: PlanRepository, sellerId: string, planId: string, forUpdate = false): Promise<StoredPlan> {
  const plan = await repo.findPlan(sellerId, planId, { forUpdate });
  if (!plan) throw recurrenceError(404, PLAN_NOT_FOUND, { combined_id: planId, seller_id: sellerId });
  return plan;
}

/** Who a change is recorded for: the `username` header, or the token's client id when absent or empty. */
export const auditActor = (username: string | undefined, token: AccessTokenClaims) => (username ? username : token.clientId);

/** PATCH status: setting the status the plan has is a 200 that changes nothing. */
export async function updatePlanStatus(
  store: Store,
  input: { token: AccessTokenClaims; planId: string; status: PlanStatus; username?: string },
): Promise<StoredPlan> {
  const { token, planId, status } = input;
  return store.transaction(async (tx) => {
    const repo = planRepository(tx);
    const plan = await planOfSeller(repo, token.sellerId, planId, true);
    if (debitPlanBlockedInBrazil(plan, status, token.country)) {
      throw recurrenceError(422, DEBIT_PLAN_IN_BRAZIL, { combined_id: planId, seller_id: token.sellerId });
    }
    if (plan.status !== status) {
      await repo.setPlanStatus(token.sellerId, planId, status);
      await repo.recordAudit({ sellerId: token.sellerId, actor: auditActor(input.username, token), clientId: token.clientId, action: `plan.status.${status}`, objectId: planId });
    }
    return { ...plan, status };
  });
}

/** The plan as answered: `floating_data` only when it has entries. */
export function presentPlan(plan: StoredPlan) {
  const { floating_data, ...rest } = plan;
  return floating_data.length ? { ...rest, floating_data } : rest;
}
