// The platform's reference of a checkout in a merchant notification (`reference_code`).
import { randomInt } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Contract decision: the platform's reference of the checkout, 12 upper-case letters and digits. */
export const platformReferenceCode = () => Array.from({ length: 12 }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('');
