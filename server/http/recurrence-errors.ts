// Errors of the recurrence areas (subscription, plan, subscription webhook), in http/ because all
// three throw them: the fixed message of `RecurrenceError`, plus the ids the body carries
// (rendered by error-renderers.ts).
import type { components } from './contract.ts';
import { ApiError, type Problem } from './errors.ts';

export type RecurrenceErrorPayment = components['schemas']['RecurrenceErrorPayment'];

export interface RecurrenceErrorFields {
  /** The token's seller. */
  seller_id?: string;
  /** The subscription (or, for plan errors, the plan) the error is about. */
  combined_id?: string;
  order_id?: string;
  payments?: RecurrenceErrorPayment[];
}

/** `details` name the request's fields at fault, when the error is about some. */
export function recurrenceError(status: number, message: string, fields: RecurrenceErrorFields = {}, details: Problem[] = []): ApiError {
  const present = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  return new ApiError(status, undefined, message, details, {}, present);
}
