// The installment calendar of a subscription, in one function (contract: `PlanPeriod`). Every date
// is a UTC calendar date written `YYYY-MM-DD`; nothing here reads a clock or a time zone.

export type PeriodType = 'yearly' | 'monthly' | 'bimonthly' | 'quarterly' | 'semesterly' | 'specific';

export interface SchedulePlan {
  amount: number;
  period: { type: PeriodType; billing_cycle: number; specific_cycle_in_days?: number };
  floating_data?: ReadonlyArray<{ installment: number; amount?: number }>;
}

export interface ScheduledInstallment {
  installment: number;
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  /** Minor units, shippings not included: the plan's floating amount for it, else the plan amount. */
  amount: number;
}

const MONTHS_PER_STEP: Record<Exclude<PeriodType, 'specific'>, number> = {
  monthly: 1,
  bimonthly: 2,
  quarterly: 3,
  semesterly: 6,
  yearly: 12,
};

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
export const formatDate = (year: number, month: number, day: number) => `${pad(year, 4)}-${pad(month)}-${pad(day)}`;

/** `YYYY-MM-DD` → [year, month 1–12, day]. */
export function parseDate(date: string): [number, number, number] {
  const [year, month, day] = date.split('-').map(Number);
  return [year!, month!, day!];
}

/** Days of a month (1–12) of a year, leap years included. */
export const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** `date` plus `months` months, on `day` or on the month's last day when it is shorter. */
export function addMonthsClamped(date: string, months: number, day: number): string {
  const [year, month] = parseDate(date);
  const index = year * 12 + (month - 1) + months;
  const [y, m] = [Math.floor(index / 12), (index % 12) + 1];
  return formatDate(y, m, Math.min(day, daysInMonth(y, m)));
}

/** The date past every date JavaScript holds (±273 790 years), as addDays writes it: past every platform date. */
const BEYOND = { after: '+275760-09-13', before: '-271821-04-20' } as const;

/**
 * `date` plus `days` days. A result past what a Date holds (a plan of 99 999 999-day cycles) is
 * written as the last (or first) date a Date holds, which no platform date check accepts: the
 * caller answers it as a schedule running past 9999 rather than a RangeError.
 */
export function addDays(date: string, days: number): string {
  const [year, month, day] = parseDate(date);
  const time = Date.UTC(year, month - 1, day + days);
  if (Number.isNaN(time)) return days > 0 ? BEYOND.after : BEYOND.before;
  return new Date(time).toISOString().slice(0, 10);
}

/** Today's UTC calendar date at `now`. */
export const utcDate = (now: Date) => now.toISOString().slice(0, 10);

/**
 * Every installment of a plan started on `start`: `billing_cycle` installments; month-based periods
 * fall on the start's day of month (`payment_date`), clamped to shorter months and always returning
 * to it; `specific` every `specific_cycle_in_days` days. The plan's floating amounts override the
 * plan amount.
 */
export function installmentSchedule(plan: SchedulePlan, start: string): ScheduledInstallment[] {
  const { type, billing_cycle: count, specific_cycle_in_days: everyDays } = plan.period;
  const floating = new Map((plan.floating_data ?? []).map((f) => [f.installment, f.amount]));
  const paymentDate = parseDate(start)[2];
  return Array.from({ length: count }, (_, i) => {
    const installment = i + 1;
    const date =
      type === 'specific' ? addDays(start, i * (everyDays ?? 1)) : addMonthsClamped(start, i * MONTHS_PER_STEP[type], paymentDate);
    return { installment, date, amount: floating.get(installment) ?? plan.amount };
  });
}
