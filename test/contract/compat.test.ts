// The breaking-change gate (`make check-compat`, scripts/compat/): each rule on a small before/after
// pair, what stays allowed, the major-version escape, and the committed baseline against the bundle.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { compare, majorOf, type Rule } from '../../scripts/compat/compat.ts';

const root = new URL('../../', import.meta.url).pathname;

/** A one-operation contract: POST /items takes an Item request and answers an Item. */
function contract(edit: (doc: any) => void = () => {}, version = '1.0.0'): any {
  const doc: any = {
    openapi: '3.1.0',
    info: { title: 'T', version },
    paths: {
      '/items': {
        parameters: [{ name: 'page', in: 'query', schema: { type: 'integer', maximum: 100 } }],
        get: {
          operationId: 'listItems',
          responses: {
            '200': {
              description: 'ok',
              headers: { 'X-Total-Count': { required: true, schema: { type: 'integer', format: 'int32' } }, 'X-Page': { schema: { type: 'integer' } } },
              content: {
                'application/json': {
                  schema: {
                    type: 'array',
                    items: { oneOf: [{ $ref: '#/components/schemas/Item' }, { type: 'object', required: ['kind'], properties: { kind: { type: 'string', enum: ['folder'] } } }] },
                  },
                },
              },
            },
          },
        },
        post: {
          operationId: 'createItem',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ItemRequest' } } } },
          responses: {
            '201': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } },
            '400': { $ref: '#/components/responses/Error' },
          },
        },
      },
    },
    webhooks: {
      'item-created': {
        post: { operationId: 'itemCreated', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } }, responses: { '200': { description: 'ok' } } },
      },
    },
    components: {
      schemas: {
        ItemRequest: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', maxLength: 50 },
            code: { $ref: '#/components/schemas/Code', maxLength: 30 },
            region: { $ref: '#/components/schemas/Code', maxLength: 5 },
            note: { type: ['string', 'null'], maxLength: 200 },
            color: { type: 'string', enum: ['red', 'blue'] },
            amount: { type: 'number' },
            payer: { anyOf: [{ type: 'string', maxLength: 20 }, { type: 'object', properties: { email: { type: 'string', maxLength: 254 } } }] },
          },
        },
        Item: {
          type: 'object',
          required: ['id'],
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            status: { type: 'string', enum: ['active', 'inactive'] },
            tags: { type: 'array', items: { type: 'object', properties: { label: { type: 'string' } } } },
          },
        },
        Code: { type: 'string', pattern: '^[A-Z]+$' },
        Error: { type: 'object', properties: { code: { type: 'string', 'x-extensible-enum': true, enum: ['invalid', 'not_found'] } } },
      },
      responses: { Error: { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    },
  };
  edit(doc);
  return doc;
}

const rulesOf = (edit: (doc: any) => void, version?: string) => compare(contract(), contract(edit, version)).breaking.map((f) => f.rule);
const schemas = (doc: any) => doc.components.schemas;

describe('the breaking-change rules', () => {
  const cases: Array<[string, (doc: any) => void, Rule]> = [
    ['an operation removed', (d) => delete d.paths['/items'].get, 'removed-operation'],
    ['a path removed', (d) => delete d.paths['/items'], 'removed-operation'],
    ['a webhook removed', (d) => delete d.webhooks['item-created'], 'removed-operation'],
    ['a response field removed', (d) => delete schemas(d).Item.properties.name, 'removed-response-field'],
    ['a nested response field removed', (d) => delete schemas(d).Item.properties.tags.items.properties.label, 'removed-response-field'],
    ['a response enum value removed', (d) => (schemas(d).Item.properties.status.enum = ['active']), 'removed-enum-value'],
    ['a request enum value removed', (d) => (schemas(d).ItemRequest.properties.color.enum = ['red']), 'removed-enum-value'],
    ['an open enum value removed', (d) => (schemas(d).Error.properties.code.enum = ['invalid']), 'removed-enum-value'],
    ['a value added to a closed response enum', (d) => schemas(d).Item.properties.status.enum.push('archived'), 'added-enum-value'],
    ['a request field newly required', (d) => schemas(d).ItemRequest.required.push('note'), 'new-required-request-field'],
    ['a parameter newly required', (d) => (d.paths['/items'].parameters[0].required = true), 'new-required-request-field'],
    ['a request type narrowed (null refused)', (d) => (schemas(d).ItemRequest.properties.note.type = 'string'), 'narrowed-type'],
    ['a request type narrowed (number to integer)', (d) => (schemas(d).ItemRequest.properties.amount.type = 'integer'), 'narrowed-type'],
    ['a request bound tightened', (d) => (schemas(d).ItemRequest.properties.name.maxLength = 20), 'narrowed-type'],
    ['a request bound beside a $ref tightened', (d) => (schemas(d).ItemRequest.properties.code.maxLength = 10), 'narrowed-type'],
    ['a bound beside the second $ref of one component tightened', (d) => (schemas(d).ItemRequest.properties.region.maxLength = 2), 'narrowed-type'],
    ['a parameter bound tightened', (d) => (d.paths['/items'].parameters[0].schema.maximum = 50), 'narrowed-type'],
    ['a request pattern added', (d) => (schemas(d).ItemRequest.properties.name.pattern = '^[a-z]+$'), 'narrowed-type'],
    ['a response type widened', (d) => (schemas(d).Item.properties.id.type = ['string', 'null']), 'narrowed-type'],
    ['a response field no longer required', (d) => (schemas(d).Item.required = []), 'removed-response-field'],
    ['a response header removed', (d) => delete d.paths['/items'].get.responses['200'].headers['X-Total-Count'], 'removed-response-header'],
    ['a response header no longer required', (d) => (d.paths['/items'].get.responses['200'].headers['X-Total-Count'].required = false), 'removed-response-header'],
    ['a response header type widened', (d) => (d.paths['/items'].get.responses['200'].headers['X-Page'].schema.type = ['integer', 'string']), 'narrowed-type'],
    ['a request alternative dropped (anyOf shorter)', (d) => schemas(d).ItemRequest.properties.payer.anyOf.pop(), 'narrowed-type'],
    [
      'a request alternative narrowed inside a longer anyOf',
      (d) => (schemas(d).ItemRequest.properties.payer.anyOf = [{ type: 'string', maxLength: 10 }, schemas(d).ItemRequest.properties.payer.anyOf[1], { type: 'integer' }]),
      'narrowed-type',
    ],
    ['a request bound that a released enum value breaks', (d) => (schemas(d).ItemRequest.properties.color.maxLength = 3), 'narrowed-type'],
    ['a request pattern that a released enum value breaks', (d) => (schemas(d).ItemRequest.properties.color.pattern = '^r'), 'narrowed-type'],
    ['a response type widened through anyOf alternatives', (d) => (schemas(d).Item.properties.name = { anyOf: [{ type: 'string' }, { type: 'null' }] }), 'narrowed-type'],
    ['a response enum without a type replaced by any value', (d) => (schemas(d).Item.properties.status = { description: 'anything' }), 'narrowed-type'],
    ['a request pattern added in an allOf member', (d) => (schemas(d).ItemRequest.properties.name = { allOf: [{ $ref: '#/components/schemas/Code' }, { type: 'string', maxLength: 50 }] }), 'narrowed-type'],
    ['a request bound tightened in an allOf member', (d) => (schemas(d).ItemRequest.properties.code = { allOf: [{ $ref: '#/components/schemas/Code' }, { maxLength: 10 }] }), 'narrowed-type'],
    ['a request pattern added to a $ref with a pattern beside it', (d) => (schemas(d).ItemRequest.properties.code = { $ref: '#/components/schemas/Code', maxLength: 30, allOf: [{ pattern: '^A' }] }), 'narrowed-type'],
    ['a response alternative added (oneOf longer)', (d) => d.paths['/items'].get.responses['200'].content['application/json'].schema.items.oneOf.push({ type: 'string' }), 'narrowed-type'],
  ];
  for (const [name, edit, rule] of cases) {
    it(`flags ${name} (${rule})`, () => {
      expect(rulesOf(edit)).toContain(rule);
    });
  }

  it('follows an alternative of a oneOf that got longer into its own fields', () => {
    const result = compare(
      contract(),
      contract((d) => {
        d.paths['/items'].get.responses['200'].content['application/json'].schema.items.oneOf.push({ $ref: '#/components/schemas/Error' });
        delete schemas(d).Item.properties.name;
      }),
    );
    const wheres = result.breaking.map((f) => `${f.rule} ${f.where}`);
    expect(wheres).toContain('removed-response-field GET /items response 200 application/json[](oneOf)[Item].name');
    expect(wheres).toContain('narrowed-type GET /items response 200 application/json[](oneOf)[Error]');
  });

  it('flags a webhook payload like a response: a field removed from what the merchant receives', () => {
    const result = compare(contract(), contract((d) => delete schemas(d).Item.properties.id));
    expect(result.breaking.map((f) => f.where)).toContain('POST webhook item-created payload application/json.id');
  });

  it('allows additive changes: new operation, optional request field, response field, open enum value, looser bound', () => {
    const rules = rulesOf((d) => {
      d.paths['/other'] = { get: { operationId: 'other', responses: { '200': { description: 'ok' } } } };
      schemas(d).ItemRequest.properties.extra = { type: 'string', maxLength: 10 };
      schemas(d).Item.properties.created_at = { type: 'string' };
      schemas(d).Error.properties.code.enum.push('rate_limited');
      schemas(d).ItemRequest.properties.color.enum.push('green');
      schemas(d).ItemRequest.properties.name.maxLength = 80;
      schemas(d).ItemRequest.properties.amount.type = ['number', 'null'];
      // A response header added, a header made required, a request alternative added, a response alternative removed.
      d.paths['/items'].get.responses['200'].headers['X-Next'] = { schema: { type: 'string' } };
      d.paths['/items'].get.responses['200'].headers['X-Page'].required = true;
      schemas(d).ItemRequest.properties.payer.anyOf.push({ type: 'integer' });
      d.paths['/items'].get.responses['200'].content['application/json'].schema.items.oneOf.pop();
      // A response field made required; header names compare without case.
      schemas(d).Item.required.push('name');
      const headers = d.paths['/items'].get.responses['200'].headers;
      headers['x-total-count'] = headers['X-Total-Count'];
      delete headers['X-Total-Count'];
    });
    expect(rules).toEqual([]);
  });

  it('reads a rule alike wherever it is written: beside a $ref, in an allOf member, or written out', () => {
    // The bundles write a field's own rule as an allOf member beside the shared one, and the shared
    // Text rule out at a field that reached it through allOf: neither narrows what a request takes.
    const code = (schema: unknown) => contract((d) => (schemas(d).ItemRequest.properties.code = schema));
    const besideRef = code({ $ref: '#/components/schemas/Code', maxLength: 30 });
    const asMember = code({ allOf: [{ $ref: '#/components/schemas/Code' }, { type: 'string', maxLength: 30 }] });
    const besideAllOf = code({ type: 'string', allOf: [{ $ref: '#/components/schemas/Code' }], maxLength: 30 });
    const writtenOut = code({ type: 'string', pattern: '^[A-Z]+$', maxLength: 30 });
    for (const [before, after] of [[besideRef, asMember], [besideAllOf, asMember], [besideAllOf, writtenOut], [asMember, besideRef]]) {
      expect(compare(before, after).breaking).toEqual([]);
    }
    // A $ref with a pattern of its own beside it keeps both patterns: the target's is not new when it moves into allOf.
    const ownPattern = code({ $ref: '#/components/schemas/Code', pattern: '^[A-M]', maxLength: 30 });
    const ownAsMember = code({ allOf: [{ $ref: '#/components/schemas/Code' }, { type: 'string', pattern: '^[A-M]', maxLength: 30 }] });
    expect(compare(ownPattern, ownAsMember).breaking).toEqual([]);
  });

  it('reads a pattern respelled from \\u00XX escapes to \\xXX as the same, and an escaped backslash as no escape', () => {
    const spelled = (pattern: string) => contract((d) => (schemas(d).ItemRequest.properties.name.pattern = pattern));
    expect(compare(spelled('^[^\\u0000-\\u001f\\u007F]*$'), spelled('^[^\\x00-\\x1F\\x7f]*$')).breaking).toEqual([]);
    // `\\u0041` is a backslash then `u0041`, not an A: respelling it changes the pattern.
    expect(compare(spelled('^[^\\\\u0041]*$'), spelled('^[^\\\\x41]*$')).breaking).toMatchObject([{ rule: 'narrowed-type' }]);
    expect(compare(spelled('^[^\\u0041]*$'), spelled('^[^\\u0042]*$')).breaking).toMatchObject([{ rule: 'narrowed-type' }]);
  });

  it('reads the types of alternatives, enum and const values alike, and bounds that every listed value meets', () => {
    const before = contract((d) => {
      schemas(d).ItemRequest.properties.kind = { type: ['string', 'array'], maxLength: 20, maxItems: 5, items: { type: 'string', maxLength: 20 } };
      schemas(d).ItemRequest.properties.version = { type: 'integer', const: 1 };
      schemas(d).Item.properties.kind = { type: ['string', 'array'], items: { type: 'string' } };
      schemas(d).Item.properties.level = { enum: [1, 2] };
    });
    const after = contract((d) => {
      // The same values, written as alternatives of one type each.
      schemas(d).ItemRequest.properties.kind = { anyOf: [{ type: 'string', maxLength: 20 }, { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 20 } }] };
      schemas(d).Item.properties.kind = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] };
      // Bounds and a pattern that the only values allowed before already meet.
      schemas(d).ItemRequest.properties.version = { type: 'integer', const: 1, minimum: 1, maximum: 1 };
      schemas(d).ItemRequest.properties.color.pattern = '^(red|blue)$';
      schemas(d).ItemRequest.properties.color.maxLength = 4;
      schemas(d).Item.properties.level = { type: 'integer', enum: [1, 2] };
    });
    expect(compare(before, after).breaking).toEqual([]);
    // And the other way: dropping the string alternative of the request field refuses what clients sent.
    const narrower = contract((d) => {
      schemas(d).ItemRequest.properties.kind = { anyOf: [{ type: 'array', maxItems: 5, items: { type: 'string', maxLength: 20 } }] };
      schemas(d).Item.properties.kind = { type: ['string', 'array'], items: { type: 'string' } };
      schemas(d).ItemRequest.properties.version = { type: 'integer', const: 1 };
      schemas(d).Item.properties.level = { enum: [1, 2] };
    });
    expect(compare(before, narrower).breaking).toMatchObject([{ rule: 'narrowed-type', where: 'POST /items request application/json.kind' }]);
  });

  it('lets breaking changes through when the major version changes, and only then', () => {
    const edit = (d: any) => delete d.paths['/items'].get;
    expect(compare(contract(), contract(edit, '1.1.0'))).toMatchObject({ majorChanged: false, breaking: [{ rule: 'removed-operation' }] });
    expect(compare(contract(), contract(edit, '2.0.0'))).toMatchObject({ majorChanged: true, breaking: [{ rule: 'removed-operation' }] });
    expect([majorOf('1.2.3'), majorOf('v2'), majorOf('v20250823.0859')]).toEqual(['1', '2', '20250823']);
  });

  it('terminates on recursive schemas', () => {
    const edit = (d: any) => (schemas(d).Item.properties.children = { type: 'array', items: { $ref: '#/components/schemas/Item' } });
    const before = contract(edit);
    const after = contract((d) => {
      edit(d);
      delete schemas(d).Item.properties.name;
    });
    expect(compare(before, after).breaking.map((f) => f.rule)).toContain('removed-response-field');
  });
});

describe('make check-compat', () => {
  const run = promisify(execFile);
  const tsx = join(root, 'node_modules', '.bin', 'tsx');
  const check = join(root, 'scripts', 'compat', 'check.ts');

  it('passes for the current bundle against the released baseline', async () => {
    const { stdout } = await run(tsx, [check], { cwd: root });
    expect(stdout).toMatch(/No breaking change|allowed: the major version changed/);
  });

  it('fails on a breaking change of the bundle, and passes it with a new major version', async () => {
    const released = join(root, 'scripts', 'compat', 'released', 'platform.openapi.json');
    const doc = JSON.parse(await readFile(released, 'utf8'));
    const [path] = Object.keys(doc.paths);
    delete doc.paths[path!];
    const dir = await mkdtemp(join(tmpdir(), 'compat-'));
    try {
      const broken = join(dir, 'broken.json');
      await writeFile(broken, JSON.stringify(doc));
      const failure = await run(tsx, [check, released, broken], { cwd: root }).then(
        () => null,
        (e: { code: number; stdout: string }) => e,
      );
      expect(failure?.code).toBe(1);
      expect(failure?.stdout).toContain(`removed-operation: `);
      doc.info.version = `${Number(doc.info.version.split('.')[0]) + 1}.0.0`;
      await writeFile(broken, JSON.stringify(doc));
      const { stdout } = await run(tsx, [check, released, broken], { cwd: root });
      expect(stdout).toContain('allowed: the major version changed');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('knows the open enums of the contract: error codes, card brands, payment methods, statuses', async () => {
    const doc = JSON.parse(await readFile(join(root, 'scripts', 'compat', 'released', 'platform.openapi.json'), 'utf8'));
    const s = doc.components.schemas;
    for (const open of [s.WebCheckoutError.properties.code, s.CardBrand, s.PaymentMethodKey, s.SubscriptionStatus, s.SubscriptionPaymentStatus]) {
      expect(open).toMatchObject({ 'x-extensible-enum': true });
    }
  });
});
