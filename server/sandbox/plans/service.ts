// Sandbox area: creates recurrence plans for a seller (reference-only; the platform's back office
// does it for real). Plans start active unless the body says otherwise.
import { randomUUID } from 'node:crypto';
import type { components } from '../../http/contract.ts';
import { ApiError } from '../../http/errors.ts';
import { planRepository, type StoredPlan } from '../../plan/repository.ts';
import { isoSeconds } from '../../http/time.ts';
import { debitPlanBlockedInBrazil } from '../../plan/service.ts';
import type { Store } from '../../store/store.ts';
import { checkCents, checkCurrenciesCarried, checkSellerCurrency } from '../sellers/service.ts';

type SandboxPlanCreate = components['schemas']['SandboxPlanCreate'];

/** 422 `validation_error` naming the body field (`/floating_data/0/installment`). */
const unprocessable = (message: string, pointer: string) => new ApiError(422, 'validation_error', message, [{ location: 'body', pointer, message }]);

/** Floating installments: within the billing cycle, at most one per installment; sorted. */
export function planFloatingData(body: SandboxPlanCreate): StoredPlan['floating_data'] {
  const entries = [...(body.floating_data ?? [])].sort((a, b) => a.installment - b.installment);
  entries.forEach((entry, i) => {
    if (entry.installment > body.period.billing_cycle) {
      throw unprocessable(`floating_data installment ${entry.installment} is outside the billing cycle of ${body.period.billing_cycle}`, `/floating_data/${i}/installment`);
    }
    if (i > 0 && entries[i - 1]!.installment === entry.installment) {
      throw unprocessable(`floating_data has installment ${entry.installment} twice`, `/floating_data/${i}/installment`);
    }
  });
  return entries.map((e) => ({ installment: e.installment, amount: e.amount ?? body.amount }));
}

export async function createSandboxPlan(store: Store, body: SandboxPlanCreate, now = new Date()): Promise<StoredPlan> {
  return store.transaction(async (tx) => {
    const repo = planRepository(tx);
    const seller = await repo.findSeller(body.seller_id);
    if (!seller) throw new ApiError(404, 'seller_not_found', 'Seller not found');
    checkCurrenciesCarried([{ pointer: '/currency', value: body.currency }]);
    checkSellerCurrency(seller.currencies, body.currency, '/currency');
    checkCents(body.currency, [
      { pointer: '/amount', value: body.amount },
      { pointer: '/sales_tax', value: body.sales_tax },
      ...(body.floating_data ?? []).map((entry, i) => ({ pointer: `/floating_data/${i}/amount`, value: entry.amount })),
    ]);
    const status = body.status ?? 'active';
    if (debitPlanBlockedInBrazil(body, status, seller.country)) {
      throw unprocessable('A debit_card plan of a Brazilian seller cannot be active', '/payment_types');
    }
    const { type, billing_cycle, specific_cycle_in_days } = body.period;
    const plan: StoredPlan = {
      seller_id: seller.sellerId,
      plan_id: randomUUID(),
      name: body.name,
      ...(body.description !== undefined ? { description: body.description } : {}),
      amount: body.amount,
      currency: body.currency,
      payment_types: body.payment_types,
      ...(body.sales_tax !== undefined ? { sales_tax: body.sales_tax } : {}),
      ...(body.product_type !== undefined ? { product_type: body.product_type } : {}),
      create_date: isoSeconds(now),
      status,
      period: { type, billing_cycle, ...(type === 'specific' ? { specific_cycle_in_days } : {}) },
      floating_data: planFloatingData(body),
    };
    await repo.insertPlan(plan);
    return plan;
  });
}
