// The installment calendar (installmentSchedule) and the billing rules (retries, attempt effects),
// by name, with fixed dates.
import { describe, expect, it } from 'vitest';
import { attemptEffect, nextRetryDate, nextScheduledDate, paymentTransitionAllowed } from '../../server/subscription/billing.ts';
import type { InstallmentRow } from '../../server/subscription/repository.ts';
import { installmentSchedule, type SchedulePlan } from '../../server/subscription/schedule.ts';
import { cardBrand, installmentStartDate, newDateKeepsOrder } from '../../server/subscription/service.ts';

const plan = (type: SchedulePlan['period']['type'], billing_cycle: number, extra: Partial<SchedulePlan> = {}): SchedulePlan => ({
  amount: 1000,
  period: { type, billing_cycle },
  ...extra,
});
const dates = (p: SchedulePlan, start: string) => installmentSchedule(p, start).map((i) => i.date);

describe('installmentSchedule', () => {
  it('monthly from 31 January clamps to the month end and returns to the 31st (leap year)', () => {
    expect(dates(plan('monthly', 5), '2028-01-31')).toEqual(['2028-01-31', '2028-02-29', '2028-03-31', '2028-04-30', '2028-05-31']);
  });
  it('monthly in a common year clamps to 28 February', () => {
    expect(dates(plan('monthly', 3), '2026-01-30')).toEqual(['2026-01-30', '2026-02-28', '2026-03-30']);
  });
  it('the contract example: 12 monthly from 2026-03-31 end on 2027-02-28', () => {
    const schedule = dates(plan('monthly', 12), '2026-03-31');
    expect(schedule[1]).toBe('2026-04-30');
    expect(schedule[11]).toBe('2027-02-28');
  });
  it('bimonthly, quarterly and semesterly step 2, 3 and 6 months across years', () => {
    expect(dates(plan('bimonthly', 4), '2026-08-31')).toEqual(['2026-08-31', '2026-10-31', '2026-12-31', '2027-02-28']);
    expect(dates(plan('quarterly', 4), '2026-11-30')).toEqual(['2026-11-30', '2027-02-28', '2027-05-30', '2027-08-30']);
    expect(dates(plan('semesterly', 3), '2026-08-31')).toEqual(['2026-08-31', '2027-02-28', '2027-08-31']);
  });
  it('yearly from 29 February bills 28 February in common years and 29 in leap years', () => {
    expect(dates(plan('yearly', 5), '2028-02-29')).toEqual(['2028-02-29', '2029-02-28', '2030-02-28', '2031-02-28', '2032-02-29']);
  });
  it('specific every N days, billing_cycle times, across a leap day', () => {
    expect(dates({ amount: 1, period: { type: 'specific', billing_cycle: 4, specific_cycle_in_days: 15 } }, '2028-02-10')).toEqual([
      '2028-02-10',
      '2028-02-25',
      '2028-03-11',
      '2028-03-26',
    ]);
  });
  it('the plan floating amounts override the plan amount', () => {
    expect(installmentSchedule(plan('monthly', 3, { floating_data: [{ installment: 1, amount: 0 }, { installment: 3, amount: 4990 }] }), '2026-01-15')).toEqual([
      { installment: 1, date: '2026-01-15', amount: 0 },
      { installment: 2, date: '2026-02-15', amount: 1000 },
      { installment: 3, date: '2026-03-15', amount: 4990 },
    ]);
  });
});

describe('installmentStartDate, cardBrand, newDateKeepsOrder', () => {
  it('starts today without a date, refuses a past date', () => {
    expect(installmentStartDate(undefined, '2026-03-20')).toEqual({ start: '2026-03-20', inPast: false });
    expect(installmentStartDate('2026-03-20', '2026-03-20')).toEqual({ start: '2026-03-20', inPast: false });
    expect(installmentStartDate('2026-03-19', '2026-03-20').inPast).toBe(true);
  });
  it('keeps a given brand, else the bin table', () => {
    expect(cardBrand({ brand: 'Amex', bin: '411111' })).toBe('Amex');
    expect(cardBrand({ bin: '549167' })).toBe('Mastercard');
    expect(cardBrand({ bin: '999999' })).toBeUndefined();
  });
  it('wants a date after today and strictly between the neighbours', () => {
    const at = (scheduledDate: string) => ({ scheduledDate }) as InstallmentRow;
    expect(newDateKeepsOrder('2026-06-05', '2026-03-20', at('2026-04-30'), at('2026-06-30'))).toBe(true);
    expect(newDateKeepsOrder('2026-06-30', '2026-03-20', at('2026-04-30'), at('2026-06-30'))).toBe(false);
    expect(newDateKeepsOrder('2026-04-30', '2026-03-20', at('2026-04-30'), at('2026-06-30'))).toBe(false);
    expect(newDateKeepsOrder('2026-03-20', '2026-03-20')).toBe(false);
    expect(newDateKeepsOrder('2026-03-21', '2026-03-20')).toBe(true);
  });
  it("takes the previous installment's retry as its date while it waits for one", () => {
    const retrying = { scheduledDate: '2030-01-05', status: 'retrying', nextAttemptOn: '2030-01-08' } as InstallmentRow;
    expect(newDateKeepsOrder('2030-01-07', '2030-01-06', retrying)).toBe(false);
    expect(newDateKeepsOrder('2030-01-08', '2030-01-06', retrying)).toBe(false);
    expect(newDateKeepsOrder('2030-01-09', '2030-01-06', retrying)).toBe(true);
    const paid = { scheduledDate: '2030-01-05', status: 'paid', nextAttemptOn: null } as InstallmentRow;
    expect(newDateKeepsOrder('2030-01-07', '2030-01-06', paid)).toBe(true);
  });
});

describe('billing rules', () => {
  it('retries at +1, +3, +5 days, dropping a retry on or after the next installment', () => {
    expect(nextRetryDate('2026-05-31', 1, '2026-06-30')).toBe('2026-06-01');
    expect(nextRetryDate('2026-05-31', 2, '2026-06-30')).toBe('2026-06-03');
    expect(nextRetryDate('2026-05-31', 3, '2026-06-30')).toBe('2026-06-05');
    expect(nextRetryDate('2026-05-31', 4, '2026-06-30')).toBeUndefined();
    expect(nextRetryDate('2026-05-31', 1, '2026-06-01')).toBeUndefined();
    expect(nextRetryDate('2026-05-31', 3)).toBe('2026-06-05');
  });

  const installment: InstallmentRow = {
    installment: 3,
    originalScheduledDate: '2026-05-31',
    originalAmount: 8990,
    scheduledDate: '2026-05-31',
    amount: 8990,
    floating: false,
    status: 'processing',
    attempts: 1,
    nextAttemptOn: null,
  };
  const effect = (paymentStatus: Parameters<typeof attemptEffect>[0]['paymentStatus'], extra: Partial<Parameters<typeof attemptEffect>[0]> = {}) =>
    attemptEffect({ paymentStatus, installment, billingCycle: 12, nextInstallmentDate: '2026-06-30', anyInstallmentPaid: true, ...extra });

  it('paid → success, or expired on the last installment', () => {
    expect(effect('approved')).toMatchObject({ subscriptionStatus: 'success', statusDetails: 'Installment 3 of 12 paid', installment: { status: 'paid' } });
    expect(effect('confirmed', { billingCycle: 3 }).subscriptionStatus).toBe('expired');
  });
  it('in flight keeps processing', () => {
    expect(effect('pending').subscriptionStatus).toBe('processing');
    expect(effect('authorized').subscriptionStatus).toBe('processing');
  });
  it('a failure with a retry left is delayed, with the contract sentence', () => {
    expect(effect('denied')).toMatchObject({
      subscriptionStatus: 'delayed',
      statusDetails: 'Installment 3 of 12 denied; retry 1 of 3 on 2026-06-01',
      installment: { status: 'retrying', nextAttemptOn: '2026-06-01' },
    });
  });
  it('no retry left: suspended after a paid installment, failed before any', () => {
    const last = { ...installment, attempts: 4 };
    expect(effect('unprocessed', { installment: last }).subscriptionStatus).toBe('suspended');
    expect(effect('expired', { installment: last, anyInstallmentPaid: false }).subscriptionStatus).toBe('failed');
  });
  it('nextScheduledDate: none while processing or final; the earliest waiting attempt otherwise', () => {
    const rows = [
      { ...installment, installment: 1, status: 'paid', nextAttemptOn: null },
      { ...installment, installment: 2, status: 'retrying', nextAttemptOn: '2026-05-01' },
      { ...installment, installment: 3, status: 'scheduled', nextAttemptOn: '2026-05-31' },
    ] as InstallmentRow[];
    expect(nextScheduledDate('delayed', rows)).toBe('2026-05-01');
    expect(nextScheduledDate('processing', rows)).toBeUndefined();
    expect(nextScheduledDate('suspended', rows)).toBeUndefined();
  });
  it('the payment state machine', () => {
    expect(paymentTransitionAllowed('pending', 'approved')).toBe(true);
    expect(paymentTransitionAllowed('authorized', 'confirmed')).toBe(true);
    expect(paymentTransitionAllowed('approved', 'canceled')).toBe(true);
    expect(paymentTransitionAllowed('approved', 'approved')).toBe(false);
    expect(paymentTransitionAllowed('denied', 'approved')).toBe(false);
    expect(paymentTransitionAllowed('authorized', 'approved')).toBe(false);
  });
});
