// The bundles write the shared Text rule out at each field that narrows it (scripts/contract/
// inline-text.ts), so that tools which drop keywords beside a `$ref` still see every bound.
import { describe, expect, it } from 'vitest';
import { inlineTextRefs } from '../../scripts/contract/inline-text.ts';
import { loadPlatform } from '../support/contract.ts';

const TEXT = { type: 'string', description: 'Text the platform stores.', pattern: '^[^\\u0000]*$' };

describe('inlineTextRefs', () => {
  const doc = {
    components: { schemas: { Text: TEXT } },
    paths: {
      '/x': {
        post: {
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    name: { $ref: '#/components/schemas/Text', maxLength: 60, description: 'A name.' },
                    url: { $ref: '#/components/schemas/Text', maxLength: 2048, pattern: '^https://' },
                    note: { $ref: '#/components/schemas/Text' },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
  const properties = (d: typeof doc) => d.paths['/x'].post.requestBody.content['application/json'].schema.properties as Record<string, any>;

  it('writes the rule out at a field that narrows it, keeping the field\'s own description', () => {
    expect(properties(inlineTextRefs(doc)).name).toEqual({ type: 'string', pattern: '^[^\\u0000]*$', maxLength: 60, description: 'A name.' });
  });

  it('keeps the $ref where the field\'s keywords would clash with the rule\'s, and where nothing narrows it', () => {
    const out = properties(inlineTextRefs(doc));
    expect(out.url).toEqual({ $ref: '#/components/schemas/Text', maxLength: 2048, pattern: '^https://' });
    expect(out.note).toEqual({ $ref: '#/components/schemas/Text' });
  });

  it('drops the Text component where no $ref to it is left (linters report it unused), and keeps it otherwise', () => {
    expect(inlineTextRefs(doc).components.schemas).toHaveProperty('Text');
    const onlyNarrowed = { components: { schemas: { Text: TEXT, Name: { $ref: '#/components/schemas/Text', maxLength: 60 } } as Record<string, unknown> } };
    expect(inlineTextRefs(onlyNarrowed).components.schemas).toEqual({ Name: { type: 'string', pattern: TEXT.pattern, maxLength: 60 } });
  });

  it('writes out a field that reaches the rule through a one-member allOf, unless its own keywords clash', () => {
    const viaAllOf = { type: 'string', allOf: [{ $ref: '#/components/schemas/Text' }], maxLength: 32, description: 'A short id.' };
    const ownPattern = { type: 'string', allOf: [{ $ref: '#/components/schemas/Text' }], maxLength: 2048, pattern: '^https://' };
    const out = inlineTextRefs({ components: { schemas: { Text: TEXT, ShortId: viaAllOf, Url: ownPattern } as Record<string, unknown> } });
    expect(out.components.schemas.ShortId).toEqual({ type: 'string', pattern: TEXT.pattern, maxLength: 32, description: 'A short id.' });
    expect(out.components.schemas.Url).toEqual(ownPattern);
  });

  it('leaves the document it is given as it was', () => {
    inlineTextRefs(doc);
    expect(properties(doc).name.$ref).toBe('#/components/schemas/Text');
  });
});

describe('the joined bundle', () => {
  it('has no bound beside a $ref to Text, except where the field has a pattern of its own', () => {
    const left: string[] = [];
    const walk = (node: any, where: string) => {
      if (!node || typeof node !== 'object') return;
      if (node.$ref === '#/components/schemas/Text' && Object.keys(node).length > 1 && !('pattern' in node)) left.push(where);
      for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`);
    };
    const bundle = loadPlatform();
    walk(bundle, '#');
    expect(left).toEqual([]);
    expect(JSON.stringify(bundle.components!.schemas!.ClientCredentialsTokenRequest.properties.client_id)).toContain('"maxLength":64');
  });
});
