// Arrays whose items must be unique name their items' scalar `type` at the items' own level, in the
// bundles (scripts/contract/ref-siblings.ts keeps a `type` beside a reference there). Ajv compares
// unique items of a known scalar type in one pass, and any others pairwise, with allErrors even past
// `maxItems`: 1,199 objects in a seller's `currencies` held the sandbox's event loop 6-13 s, long
// enough to lose its data directory's lock (re-attack review, 2026-11-25).
import { describe, expect, it } from 'vitest';
import { loadPlatform } from '../support/contract.ts';

type Node = Record<string, unknown>;

/** Every schema of `doc` with `uniqueItems: true`, by its JSON pointer. */
function uniqueArrays(doc: unknown): Array<[string, Node]> {
  const found: Array<[string, Node]> = [];
  const walk = (node: unknown, at: string) => {
    if (Array.isArray(node)) return node.forEach((child, i) => walk(child, `${at}/${i}`));
    if (!node || typeof node !== 'object') return;
    if ((node as Node).uniqueItems === true) found.push([at, node as Node]);
    for (const [key, child] of Object.entries(node)) walk(child, `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(doc, '');
  return found;
}

describe('arrays of unique items in the joined bundle', () => {
  const arrays = uniqueArrays(loadPlatform());

  it('are found (a seller\'s currencies and payment types, a test clock\'s customers)', () => {
    expect(arrays.map(([at]) => at)).toEqual(
      expect.arrayContaining([expect.stringMatching(/SandboxSellerCreate\/properties\/currencies$/), expect.stringMatching(/BusinessConfiguration\/properties\/payment_types$/), expect.stringMatching(/SandboxTestClockCreate\/properties\/customer_ids$/)]),
    );
  });

  it.each(uniqueArrays(loadPlatform()))('%s names its items\' scalar type at their own level', (_at, array) => {
    const type = (array.items as Node | undefined)?.type;
    expect(['string', 'integer', 'number', 'boolean']).toContain(type);
  });
});
