// The merchant's verification of the checkout notification: the Basic credentials first (missing,
// wrong user, wrong password, not Basic: refused), then the payload against the contract's webhook
// schema (every example of the contract accepted and typed; a tampered one refused, naming the field).
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  CheckoutNotificationError,
  verifyCheckoutNotification,
  type CheckoutNotification,
  type components,
} from '../../client/index.ts';
import { examplesOf, loadPlatform } from '../support/contract.ts';

const doc = loadPlatform();
const media = doc.webhooks!['checkout-notification']!.post.requestBody.content['application/json'];
const examples = examplesOf(doc, media) as Array<[string, CheckoutNotification]>;
const [, authorized] = examples[0]!;
const credentials = { user: 'loja-aurora', password: 'n0tif1cation-pass' };
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const headers = { 'content-type': 'application/json', authorization: basic(credentials.user, credentials.password) };

function failure(run: () => unknown): CheckoutNotificationError {
  try {
    run();
  } catch (error) {
    if (error instanceof CheckoutNotificationError) return error;
    throw error;
  }
  throw new Error('expected a CheckoutNotificationError');
}

describe('verifyCheckoutNotification', () => {
  it('has examples to check', () => {
    expect(examples.length).toBeGreaterThanOrEqual(6);
  });

  for (const [name, example] of examples) {
    it(`accepts the contract example ${name} and returns it typed`, () => {
      const notification = verifyCheckoutNotification(headers, JSON.stringify(example), credentials);
      expect(notification).toEqual(example);
      expectTypeOf(notification).toEqualTypeOf<components['schemas']['CheckoutNotification']>();
      expectTypeOf(notification.payment.result.status).toEqualTypeOf<'Authorized' | 'Denied'>();
    });
  }

  it('accepts a raw Buffer, a parsed object and fetch Headers alike', () => {
    expect(verifyCheckoutNotification(headers, Buffer.from(JSON.stringify(authorized)), credentials)).toEqual(authorized);
    expect(verifyCheckoutNotification(new Headers(headers), authorized, credentials)).toEqual(authorized);
    expect(verifyCheckoutNotification({ Authorization: headers.authorization }, authorized, credentials)).toEqual(authorized);
  });

  it('refuses a notification without an Authorization header', () => {
    expect(failure(() => verifyCheckoutNotification({}, authorized, credentials))).toMatchObject({ reason: 'missing_credentials' });
  });

  it('refuses a wrong password and a wrong user, without saying which', () => {
    const wrongPassword = failure(() => verifyCheckoutNotification({ authorization: basic(credentials.user, 'guess') }, authorized, credentials));
    const wrongUser = failure(() => verifyCheckoutNotification({ authorization: basic('someone', credentials.password) }, authorized, credentials));
    expect(wrongPassword).toMatchObject({ reason: 'invalid_credentials' });
    expect(wrongUser).toMatchObject({ reason: 'invalid_credentials', message: wrongPassword.message });
    expect(wrongPassword.message).not.toContain(credentials.password);
  });

  it('refuses other schemes and malformed Basic values', () => {
    for (const authorization of ['Bearer abc', 'Basic', `Basic ${Buffer.from('no-colon').toString('base64')}`, basic('', '')]) {
      expect(failure(() => verifyCheckoutNotification({ authorization }, authorized, credentials)).reason, authorization).toBe('invalid_credentials');
    }
  });

  it('checks credentials before the payload', () => {
    expect(failure(() => verifyCheckoutNotification({}, 'not json', credentials)).reason).toBe('missing_credentials');
  });

  it('refuses a tampered payload and names the field', () => {
    const tampered = structuredClone(authorized) as any;
    tampered.payment.result.status = 'Approved';
    const error = failure(() => verifyCheckoutNotification(headers, JSON.stringify(tampered), credentials));
    expect(error.reason).toBe('invalid_payload');
    expect(error.problems).toContainEqual({ field: 'payment.result.status', message: 'must be equal to one of the allowed values (Authorized, Denied)' });
    expect(error.message).toContain('payment.result.status');
  });

  it('names a missing required field and a malformed format', () => {
    const tampered = structuredClone(authorized) as any;
    delete tampered.payment.amount;
    tampered.checkout_id = 'not-a-uuid';
    const error = failure(() => verifyCheckoutNotification(headers, tampered, credentials));
    expect(error.problems.map((p) => p.field)).toEqual(expect.arrayContaining(['payment.amount', 'checkout_id']));
    expect(error.problems.find((p) => p.field === 'payment.amount')!.message).toBe('is required');
  });

  it('refuses a body that is not JSON', () => {
    expect(failure(() => verifyCheckoutNotification(headers, '{"checkout_id":', credentials))).toMatchObject({
      reason: 'invalid_payload',
      message: 'the notification body is not JSON',
    });
  });
});
