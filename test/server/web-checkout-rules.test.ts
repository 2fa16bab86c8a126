// The web checkout's rules, each by its name: documents, notification URLs, country and seller rules,
// the technical configuration merge, the config it reads, and the 400/422 split of its error body.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { ApiError } from '../../server/http/errors.ts';
import { renderError } from '../../server/error-bodies.ts';
import { isValidCnpj, isValidCpf } from '../../server/web-checkout/documents.ts';
import { isLoopbackOrPrivateHost, notificationUrlProblem } from '../../server/web-checkout/notification-url.ts';
import type { CheckoutSeller } from '../../server/web-checkout/repository.ts';
import {
  amountViolations,
  argentinaConfigurationViolations,
  brazilianDocumentViolations,
  checkPaymentIntentRules,
  currencyViolations,
  deniedByFraudPrevention,
  documentTypeViolations,
  flowOf,
  requireCheckoutService,
  requireFlowServices,
  type PaymentIntentRequest,
} from '../../server/web-checkout/service.ts';
import {
  DEFAULT_TECHNICAL_CONFIGURATION,
  incompleteNotificationViolations,
  mergeTechnicalConfiguration,
  notificationUrlViolations,
  redirectUrlViolations,
  technicalConfigurationView,
} from '../../server/web-checkout/technical-configuration.ts';
import { tableResolver } from './support/resolvers.ts';

const problem = (field: string, message: string) => ({ location: 'body', pointer: `/${field.replace(/\./g, '/')}`, message });

describe('isValidCpf / isValidCnpj', () => {
  it.each(['52998224725', '11144477735', '12345678909'])('accepts the CPF %s', (cpf) => expect(isValidCpf(cpf)).toBe(true));
  it.each([
    ['52998224700', 'wrong check digits'],
    ['52998224715', 'wrong second check digit'],
    ['11111111111', 'one digit repeated'],
    ['529.982.247-25', 'separators'],
    ['5299822472', 'ten digits'],
    ['', 'empty'],
  ])('refuses the CPF %s (%s)', (cpf) => expect(isValidCpf(cpf)).toBe(false));
  it.each(['11222333000181', '11444777000161'])('accepts the CNPJ %s', (cnpj) => expect(isValidCnpj(cnpj)).toBe(true));
  it.each(['11222333000182', '00000000000000', '11.222.333/0001-81', '52998224725'])('refuses the CNPJ %s', (cnpj) => expect(isValidCnpj(cnpj)).toBe(false));
});

describe('isLoopbackOrPrivateHost (URL host names as new URL() writes them)', () => {
  it.each([
    ['127.0.0.1', 'IPv4 loopback'],
    ['127.1.2.3', 'IPv4 loopback range'],
    ['[::1]', 'IPv6 loopback'],
    ['[::ffff:7f00:1]', 'IPv4-mapped IPv6 loopback (::ffff:127.0.0.1)'],
    ['10.1.2.3', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.254', 'private 172.16/12, top'],
    ['192.168.1.10', 'private 192.168/16'],
    ['100.64.0.1', 'shared address space (CGNAT)'],
    ['169.254.169.254', 'IPv4 link-local (cloud metadata)'],
    ['[fe80::1]', 'IPv6 link-local'],
    ['[fd12:3456::1]', 'IPv6 unique local'],
    ['0.0.0.0', 'unspecified IPv4'],
    ['[::]', 'unspecified IPv6'],
    ['localhost', 'localhost'],
    ['LOCALHOST', 'localhost in capitals'],
    ['localhost.', 'localhost with the root dot'],
    ['webhooks.localhost', 'a name under localhost (RFC 6761)'],
  ])('%s is not public (%s)', (host) => expect(isLoopbackOrPrivateHost(host)).toBe(true));
  it.each([
    ['8.8.8.8', 'public IPv4'],
    ['172.32.0.1', 'just outside 172.16/12'],
    ['[2001:4860:4860::8888]', 'public IPv6'],
    ['[::ffff:808:808]', 'IPv4-mapped public address'],
    ['api.lojaaurora.com.br', 'a host name (not resolved here)'],
    ['localhost.example.com', 'a name that merely starts with localhost'],
  ])('%s is public (%s)', (host) => expect(isLoopbackOrPrivateHost(host)).toBe(false));
});

describe('notificationUrlProblem', () => {
  it('accepts an https and an http URL', () => {
    expect(notificationUrlProblem('https://api.lojaaurora.com.br/webhooks/checkout', false)).toBeUndefined();
    expect(notificationUrlProblem('http://api.lojaaurora.com.br:8080/hook?x=1', false)).toBeUndefined();
  });
  it.each(['ftp://example.com/hook', 'mailto:ops@example.com', 'not a url', '/relative/path'])('refuses %s: not http or https', (url) => {
    expect(notificationUrlProblem(url, true)).toBe('must be an absolute http or https URL');
  });
  it.each(['https://user:secret@example.com/hook', 'https://user@example.com/hook', 'https://:secret@example.com/hook', 'https://@example.com/hook'])(
    'refuses %s: credentials in the URL',
    (url) => expect(notificationUrlProblem(url, true)).toBe('must not contain credentials (user:password@); use notification.user_credentials'),
  );
  it.each([
    'http://127.0.0.1:9000/hook',
    'http://[::1]/hook',
    'http://localhost:3000/hook',
    'http://192.168.0.5/hook',
    'http://2130706433/hook',
    'http://127.1/hook',
    'http://0x7f.0.0.1/hook',
    'http://0177.0.0.1/hook',
    'http://%31%32%37.0.0.1/hook',
    'http://0/hook',
    'http://[::]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:7f00:1]/hook',
    'http://[::ffff:a9fe:a9fe]/latest',
    'http://224.0.0.1/hook',
    'http://[ff02::1]/hook',
  ])(
    'refuses %s when private addresses are not allowed, accepts it when they are',
    (url) => {
      expect(notificationUrlProblem(url, false)).toBe('must not point to a loopback, private, link-local or reserved address');
      expect(notificationUrlProblem(url, true)).toBeUndefined();
    },
  );
});

const seller = (overrides: Partial<CheckoutSeller> = {}): CheckoutSeller => ({
  sellerId: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  tradeName: 'Loja',
  country: 'BR',
  currencies: ['BRL'],
  services: { checkout: true, card_verification: true, preauthorization: true },
  payments: {},
  ...overrides,
});

describe('argentinaConfigurationViolations', () => {
  it('refuses each of 3ds, card_verification and preauthorization sent as true by an AR seller', () => {
    expect(argentinaConfigurationViolations('AR', { '3ds': true, card_verification: true, preauthorization: true })).toEqual([
      problem('configurations.3ds', '3ds is unavailable for AR'),
      problem('configurations.card_verification', 'card_verification is unavailable for AR'),
      problem('configurations.preauthorization', 'preauthorization is unavailable for AR'),
    ]);
  });
  it('accepts false or absent in AR, and true elsewhere', () => {
    expect(argentinaConfigurationViolations('AR', { '3ds': false, card_verification: false, preauthorization: false })).toEqual([]);
    expect(argentinaConfigurationViolations('AR', undefined)).toEqual([]);
    expect(argentinaConfigurationViolations('BR', { '3ds': true, preauthorization: true })).toEqual([]);
  });
});

describe('documentTypeViolations', () => {
  it.each([
    ['BR', 'CPF'],
    ['BR', 'CNPJ'],
    ['AR', 'DNI'],
    ['CL', 'RUT'],
    ['MX', 'RFC'],
    ['UY', 'CI'],
    ['ES', 'DNI'],
  ])('a %s seller accepts %s', (country, type) => expect(documentTypeViolations(country, type)).toEqual([]));
  it('refuses another country\'s document type, naming the allowed ones', () => {
    expect(documentTypeViolations('BR', 'DNI')).toEqual([problem('customer.document_type', 'DNI is not allowed for a BR seller (allowed: CPF, CNPJ)')]);
    expect(documentTypeViolations('MX', 'CPF')).toEqual([problem('customer.document_type', 'CPF is not allowed for a MX seller (allowed: RFC)')]);
  });
  it('refuses every type for a country outside the table', () => {
    expect(documentTypeViolations('US', 'CPF')).toEqual([problem('customer.document_type', 'CPF is not allowed for a US seller (no document type is defined for this country)')]);
  });
});

describe('brazilianDocumentViolations', () => {
  it('needs a valid CPF, or a valid CNPJ with document_type CNPJ, from a BR seller', () => {
    expect(brazilianDocumentViolations('BR', { document_type: 'CPF', document_number: '52998224725' })).toEqual([]);
    expect(brazilianDocumentViolations('BR', { document_type: 'CNPJ', document_number: '11222333000181' })).toEqual([]);
    expect(brazilianDocumentViolations('BR', { document_type: 'CPF', document_number: '52998224700' })).toEqual([
      problem('customer.document_number', '"52998224700" is not a valid CPF'),
    ]);
    expect(brazilianDocumentViolations('BR', { document_type: 'CNPJ', document_number: '52998224725' })).toEqual([
      problem('customer.document_number', '"52998224725" is not a valid CNPJ'),
    ]);
  });
  it('does not apply outside BR', () => expect(brazilianDocumentViolations('MX', { document_type: 'RFC', document_number: 'XAXX010101000' })).toEqual([]));
});

describe('deniedByFraudPrevention', () => {
  it('marks a BR customer_id that is neither a valid CPF nor a valid CNPJ', () => {
    expect(deniedByFraudPrevention('BR', '52998224700')).toBe(true);
    expect(deniedByFraudPrevention('BR', 'CUSTOMER42')).toBe(true);
    expect(deniedByFraudPrevention('BR', '52998224725')).toBe(false);
    expect(deniedByFraudPrevention('BR', '11222333000181')).toBe(false);
  });
  it('never marks outside BR', () => expect(deniedByFraudPrevention('AR', 'CUSTOMER42')).toBe(false));
});

describe('currencyViolations and amountViolations', () => {
  it('needs one of the seller\'s currencies', () => {
    expect(currencyViolations({ currencies: ['BRL', 'USD'] }, { currency: 'USD', amount: 100 })).toEqual([]);
    expect(currencyViolations({ currencies: ['BRL'] }, { currency: 'ARS', amount: 100 })).toEqual([
      problem('payment.currency', "ARS is not one of the seller's currencies (BRL)"),
    ]);
    expect(currencyViolations({ currencies: ['BRL'] }, undefined)).toEqual([]);
  });
  it('keeps amounts within the contract\'s int32 bound', () => {
    expect(amountViolations({ currency: 'BRL', amount: 2_147_483_647 })).toEqual([]);
    expect(amountViolations({ currency: 'BRL', amount: 2_147_483_648 })).toEqual([problem('payment.amount', 'must be at most 2147483647')]);
    expect(amountViolations({ currency: 'BRL', amount: 2 ** 60 })).toEqual([problem('payment.amount', 'must be at most 2147483647')]);
  });
});

describe('requireCheckoutService / requireFlowServices / flowOf', () => {
  const forbidden = (service: string) =>
    new ApiError(403, 'service_not_enabled', `The ${service} service is not enabled for this seller`, [
      { pointer: `/services/${service}`, message: `service ${service} is not enabled` },
    ]);
  it('needs the checkout service', () => {
    expect(() => requireCheckoutService(seller({ services: { checkout: false } }))).toThrow(forbidden('checkout'));
    expect(() => requireCheckoutService(seller({ services: {} }))).toThrow(forbidden('checkout'));
    expect(() => requireCheckoutService(seller())).not.toThrow();
  });
  it('needs the service of the flow asked for, only when it is asked for', () => {
    const off = seller({ services: { checkout: true } });
    expect(() => requireFlowServices(off, { card_verification: true })).toThrow(forbidden('card_verification'));
    expect(() => requireFlowServices(off, { preauthorization: true })).toThrow(forbidden('preauthorization'));
    expect(() => requireFlowServices(off, { card_verification: false, preauthorization: false, '3ds': true })).not.toThrow();
  });
  it('names the flow', () => {
    expect(flowOf(undefined)).toBe('standard');
    expect(flowOf({ '3ds': true })).toBe('standard');
    expect(flowOf({ preauthorization: true })).toBe('preauthorization');
    expect(flowOf({ card_verification: true })).toBe('card_verification');
  });
});

describe('checkPaymentIntentRules: which status wins', () => {
  const customer = (document_type: 'CPF' | 'DNI', document_number: string) =>
    ({ customer_id: 'C1', first_name: 'A', last_name: 'B', name: 'A B', email: 'a@example.com', document_type, document_number, billing_address: { street: 'S', number: '1', country: 'AR', postal_code: '1000' } }) as PaymentIntentRequest['customer'];
  const statusOf = (s: CheckoutSeller, request: Parameters<typeof checkPaymentIntentRules>[1]) => {
    try {
      checkPaymentIntentRules(s, request);
      return 'ok';
    } catch (error) {
      return `${(error as ApiError).status} ${(error as ApiError).code}`;
    }
  };
  it('403 checkout, then 422 country rules, then 403 flow services, then 422 fields', () => {
    const ar = seller({ country: 'AR', currencies: ['ARS'], services: { checkout: true } });
    const cardCheck = { customer: customer('DNI', '30111222'), configurations: { card_verification: true } };
    expect(statusOf({ ...ar, services: {} }, cardCheck)).toBe('403 service_not_enabled');
    expect(statusOf(ar, cardCheck)).toBe('422 country_rule_violation');
    const br = seller({ services: { checkout: true } });
    expect(statusOf(br, { customer: customer('CPF', '52998224700'), configurations: { card_verification: true } })).toBe('403 service_not_enabled');
    expect(statusOf(br, { customer: customer('CPF', '52998224700'), payment: { currency: 'BRL', amount: 1 } })).toBe('422 validation_error');
    expect(statusOf(br, { customer: customer('CPF', '52998224725'), payment: { currency: 'BRL', amount: 1 } })).toBe('ok');
  });
});

describe('mergeTechnicalConfiguration', () => {
  const stored = {
    ...DEFAULT_TECHNICAL_CONFIGURATION,
    successUrl: 'https://shop.example/ok',
    notificationUrl: 'https://shop.example/hook',
    notificationAuthenticationType: 'user_credentials',
    notificationUser: 'hook-user',
    notificationPassword: 'hook-secret',
  };
  it('keeps absent properties and merges nested objects property by property', () => {
    expect(mergeTechnicalConfiguration(stored, { layout_customization: { color: { accent: '#112233' } } })).toEqual({ ...stored, accentColor: '#112233' });
  });
  it('replaces scalars, at any depth', () => {
    const merged = mergeTechnicalConfiguration(stored, {
      layout_customization: { type_face: 'Roboto' },
      error_url: 'https://shop.example/error',
      notification: { user_credentials: { password: 'rotated' } },
    });
    expect(merged).toEqual({ ...stored, typeFace: 'Roboto', errorUrl: 'https://shop.example/error', notificationPassword: 'rotated' });
  });
  it('ignores unknown properties', () => {
    const update = { success_url: 'https://shop.example/new', colour: 'red', notification: { url: 'https://shop.example/h2', retries: 3 } };
    expect(mergeTechnicalConfiguration(stored, update as never)).toEqual({ ...stored, successUrl: 'https://shop.example/new', notificationUrl: 'https://shop.example/h2' });
  });
  it('defaults authentication_type to user_credentials once a notification is sent', () => {
    const merged = mergeTechnicalConfiguration(DEFAULT_TECHNICAL_CONFIGURATION, { notification: { url: 'https://a.example/h', user_credentials: { user: 'u', password: 'p' } } });
    expect(merged.notificationAuthenticationType).toBe('user_credentials');
    expect(mergeTechnicalConfiguration(DEFAULT_TECHNICAL_CONFIGURATION, { success_url: 'https://a.example' }).notificationAuthenticationType).toBeNull();
  });
});

describe('incompleteNotificationViolations', () => {
  const base = DEFAULT_TECHNICAL_CONFIGURATION;
  it('accepts no notification at all, or a complete one', () => {
    expect(incompleteNotificationViolations(base)).toEqual([]);
    expect(incompleteNotificationViolations({ ...base, notificationUrl: 'https://a.example', notificationUser: 'u', notificationPassword: 'p' })).toEqual([]);
  });
  it('names each missing part', () => {
    expect(incompleteNotificationViolations({ ...base, notificationUrl: 'https://a.example', notificationAuthenticationType: 'user_credentials' })).toEqual([
      problem('notification.user_credentials.user', 'is required when notification.url is set'),
      problem('notification.user_credentials.password', 'is required when notification.url is set'),
    ]);
    expect(incompleteNotificationViolations({ ...base, notificationUser: 'u', notificationAuthenticationType: 'user_credentials' })).toEqual([
      problem('notification.url', 'is required when notification is set'),
      problem('notification.user_credentials.password', 'is required when notification is set'),
    ]);
  });
});

describe('notificationUrlViolations', () => {
  const resolve = tableResolver({ 'merchant.example': ['127.0.0.1'] });
  it('checks only a URL the update sends, its host name resolved', async () => {
    expect(await notificationUrlViolations({ success_url: 'http://127.0.0.1/ok' }, { allowPrivateAddresses: false, resolve })).toEqual([]);
    expect(await notificationUrlViolations({ notification: { url: 'http://127.0.0.1/hook' } }, { allowPrivateAddresses: false, resolve })).toEqual([
      problem('notification.url', 'must not point to a loopback, private, link-local or reserved address'),
    ]);
    expect(await notificationUrlViolations({ notification: { url: 'http://merchant.example/hook' } }, { allowPrivateAddresses: false, resolve })).toEqual([
      problem('notification.url', 'must have a host name that resolves to public addresses only'),
    ]);
    expect(await notificationUrlViolations({ notification: { url: 'http://127.0.0.1/hook' } }, { allowPrivateAddresses: true, resolve })).toEqual([]);
  });
});

describe('redirectUrlViolations', () => {
  it.each(['http://', 'https://', 'http://:80/', 'http://%zz/', 'http://[::1/', 'https://exa mple.com/ok', 'javascript:alert(1)', 'ftp://shop.example/ok'])(
    'refuses %s as success_url and error_url: a browser could not follow it',
    (url) => {
      expect(redirectUrlViolations({ success_url: url, error_url: url })).toEqual([
        problem('success_url', 'must be an absolute http or https URL'),
        problem('error_url', 'must be an absolute http or https URL'),
      ]);
    },
  );
  it('accepts http and https URLs with a host, and checks only the URLs the update sends', () => {
    expect(redirectUrlViolations({ success_url: 'https://shop.example/ok?a=1#x', error_url: 'http://127.0.0.1:8080/error' })).toEqual([]);
    expect(redirectUrlViolations({ layout_customization: { type_face: 'Roboto' } })).toEqual([]);
  });
});

describe('technicalConfigurationView', () => {
  it('shows the defaults of a new configuration', () => {
    expect(technicalConfigurationView(DEFAULT_TECHNICAL_CONFIGURATION)).toEqual({
      layout_customization: { color: { primary: '#0B3B8C', accent: '#F5A623' }, type_face: 'Platform Micro Text' },
    });
  });
  it('never shows the password', () => {
    const view = technicalConfigurationView({
      ...DEFAULT_TECHNICAL_CONFIGURATION,
      notificationUrl: 'https://a.example/h',
      notificationAuthenticationType: 'user_credentials',
      notificationUser: 'u',
      notificationPassword: 'never-shown',
    });
    expect(view.notification).toEqual({ url: 'https://a.example/h', authentication_type: 'user_credentials', user_credentials: { user: 'u' } });
    expect(JSON.stringify(view)).not.toContain('never-shown');
  });
});

describe('config of the web checkout', () => {
  it('takes the public base URL from PUBLIC_BASE_URL, else localhost and PORT', () => {
    expect(loadConfig({}).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PORT: '9090' }).publicBaseUrl).toBe('http://localhost:9090');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://sandbox.example.com/' }).publicBaseUrl).toBe('https://sandbox.example.com');
  });
  it("takes HOST for the default when HOST is one address that localhost does not reach", () => {
    const exposed = { SANDBOX_ADMIN_TOKEN: 'a-token-of-our-own' };
    expect(loadConfig({ HOST: '127.0.0.1' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ HOST: 'localhost' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ ...exposed, HOST: '0.0.0.0' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ ...exposed, HOST: '::' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ HOST: '::1', PORT: '9090' }).publicBaseUrl).toBe('http://[::1]:9090');
    expect(loadConfig({ HOST: '127.0.0.2' }).publicBaseUrl).toBe('http://127.0.0.2:8080');
    expect(loadConfig({ ...exposed, HOST: '192.168.1.20' }).publicBaseUrl).toBe('http://192.168.1.20:8080');
    expect(loadConfig({ HOST: '::1', PUBLIC_BASE_URL: 'http://localhost:9000' }).publicBaseUrl).toBe('http://localhost:9000');
    // Other spellings of every address, an address with a zone (no URL carries one), a long spelling of ::1.
    for (const host of ['::0', '0:0:0:0:0:0:0:0', 'fe80::1%lo']) expect(loadConfig({ ...exposed, HOST: host }).publicBaseUrl, host).toBe('http://localhost:8080');
    expect(loadConfig({ HOST: '0:0:0:0:0:0:0:1' }).publicBaseUrl).toBe('http://[::1]:8080');
  });
  it('allows private notification URLs unless SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS is false', () => {
    expect(loadConfig({}).allowPrivateNotificationUrls).toBe(true);
    expect(loadConfig({ SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS: 'false' }).allowPrivateNotificationUrls).toBe(false);
    expect(loadConfig({ SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS: 'TRUE' }).allowPrivateNotificationUrls).toBe(true);
    expect(() => loadConfig({ SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS: 'maybe' })).toThrow('SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS must be true or false, not maybe');
  });
});

describe('web checkout error body: 400 when something is missing, 422 when a present field breaks a rule', () => {
  const at = { method: 'POST', path: '/dpy/web-checkout/v1/payment-intent' };
  const refused = (errors: Array<{ path: string; message: string; errorCode?: string }>, status = 400) =>
    Object.assign(new Error('refused'), { status, errors });
  it.each([
    ['required', { path: '/body/customer', message: "must have required property 'customer'", errorCode: 'required.openapi.validation' }],
    ['minProperties', { path: '/body/layout_customization', message: 'must NOT have fewer than 1 properties', errorCode: 'minProperties.openapi.validation' }],
    ['type of the body', { path: '/body', message: 'must be object', errorCode: 'type.openapi.validation' }],
  ])('%s → 400 invalid_request', (_name, error) => {
    const rendered = renderError(refused([error]), at);
    expect(rendered.status).toBe(400);
    expect(rendered.json).toMatchObject({ code: 'invalid_request', message: 'One or more required fields are missing' });
  });
  it.each([
    ['type of a field', { path: '/body/payment/amount', message: 'must be integer', errorCode: 'type.openapi.validation' }],
    ['maxLength', { path: '/body/customer/billing_address/postal_code', message: 'must NOT have more than 8 characters', errorCode: 'maxLength.openapi.validation' }],
    ['pattern', { path: '/body/payment/currency', message: 'must match pattern "^[A-Z]{3}$"', errorCode: 'pattern.openapi.validation' }],
    ['enum', { path: '/body/customer/document_type', message: 'must be equal to one of the allowed values', errorCode: 'enum.openapi.validation' }],
    ['format', { path: '/body/customer/email', message: 'must match format "email"', errorCode: 'format.openapi.validation' }],
    ['minimum', { path: '/body/payment/amount', message: 'must be >= 1', errorCode: 'minimum.openapi.validation' }],
  ])('%s → 422 validation_error', (_name, error) => {
    const rendered = renderError(refused([error]), at);
    expect(rendered.status).toBe(422);
    expect(rendered.json).toMatchObject({ code: 'validation_error', message: 'One or more fields failed validation' });
  });
  it('says what a `not` rule forbids (card verification carrying a payment; both flows at once)', () => {
    expect(renderError(refused([{ path: '/body', message: 'must NOT be valid', errorCode: 'not.openapi.validation' }]), at)).toEqual({
      status: 422,
      headers: {},
      json: { code: 'validation_error', message: 'One or more fields failed validation', details: [{ message: 'payment and product must be omitted when configurations.card_verification is true' }] },
    });
    expect(renderError(refused([{ path: '/body/configurations', message: 'must NOT be valid', errorCode: 'not.openapi.validation' }]), at).json).toEqual({
      code: 'validation_error',
      message: 'One or more fields failed validation',
      details: [{ field: 'configurations', message: 'card_verification and preauthorization cannot both be true' }],
    });
  });
  it('answers a missing or non-JSON body (the validator\'s 415) with 400 invalid_request', () => {
    expect(renderError(refused([{ path: '/body', message: 'unsupported media type undefined' }], 415), at)).toEqual({
      status: 400,
      headers: {},
      json: {
        code: 'invalid_request',
        message: 'The request body must be a JSON object (Content-Type: application/json)',
        details: [{ message: 'The request body must be a JSON object (Content-Type: application/json)' }],
      },
    });
  });
});
