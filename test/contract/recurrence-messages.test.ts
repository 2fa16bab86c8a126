// The recurrence areas' error `message` is one of the fixed texts the contract lists
// (RecurrenceError's table), so that a client may branch on status and message: every text the
// server throws is in the table, with its status.
import { describe, expect, it } from 'vitest';
import { LAST_DATE } from '../../server/http/formats.ts';
import { DEBIT_PLAN_IN_BRAZIL, PLAN_NOT_FOUND } from '../../server/plan/service.ts';
import { MESSAGES as SUBSCRIPTION_MESSAGES } from '../../server/subscription/service.ts';
import { MESSAGES as WEBHOOK_MESSAGES } from '../../server/subscription-webhook/service.ts';
import { loadPlatform } from '../support/contract.ts';

/** The table's rows: HTTP status and message, the message without its backticks. */
function tableRows(): Array<[number, string]> {
  const description: string = (loadPlatform() as any).components.schemas.RecurrenceError.description;
  return [...description.matchAll(/^\| (\d{3}) \| [^|]+ \| `([^`]+)` \|/gm)].map((m) => [Number(m[1]), m[2]!]);
}

describe('RecurrenceError', () => {
  it('lists every fixed message the subscription, plan and webhook services throw', () => {
    const listed = tableRows().map(([, message]) => message);
    expect(listed.length).toBeGreaterThan(20);
    const thrown = [...Object.values(SUBSCRIPTION_MESSAGES), ...Object.values(WEBHOOK_MESSAGES), PLAN_NOT_FOUND, DEBIT_PLAN_IN_BRAZIL];
    expect(thrown.filter((message) => !listed.includes(message))).toEqual([]);
  });

  it('gives the money rule, the amount bound and the last date their 422', () => {
    const rows = tableRows();
    for (const message of [SUBSCRIPTION_MESSAGES.noCents, SUBSCRIPTION_MESSAGES.chargeTooLarge, SUBSCRIPTION_MESSAGES.scheduleTooLate]) {
      expect(rows).toContainEqual([422, message]);
    }
    expect(SUBSCRIPTION_MESSAGES.scheduleTooLate).toContain(LAST_DATE);
  });
});
