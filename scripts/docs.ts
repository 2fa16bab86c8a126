// `make docs`: the offline HTML reference (Redocly build-docs) of the joined bundle, made to read
// like a guide. The bundle already carries each area's introduction (a trait tag first in the
// area's tag group, written by scripts/generate.ts); this step adds the README's "Contract
// decisions" tables as a section of their own, and turns every long "**Package decision (the seed
// does not show …):**" lead-in of a description into a short marker that links to that section.
// generated/ itself is left as it is: clients and the reference server read the full text.
//
//   tsx scripts/docs.ts <out.html>
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { AREAS, introductionTag, type Area } from './areas.ts';

const root = new URL('..', import.meta.url).pathname;

/** The tag (a section of the reference) that carries the decisions tables, and its anchor. */
export const DECISIONS_TAG = 'Contract decisions';
/** The renderer links a tag as `#/<name, lower case, spaces as hyphens>`. */
export const DECISIONS_ANCHOR = `#/${DECISIONS_TAG.toLowerCase().replace(/ /g, '-')}`;

const LEAD_IN = /\*\*Package decision(?: \([^)]*\))?:\*\*/g;

/** The "## Contract decisions" section of the README, without its heading. */
export function decisionsSection(readme: string): string {
  const start = readme.indexOf('\n## Contract decisions\n');
  if (start < 0) throw new Error('README.md has no "## Contract decisions" section');
  const body = readme.slice(start + '\n## Contract decisions\n'.length);
  const end = body.search(/\n## /);
  return (end < 0 ? body : body.slice(0, end))
    .replace(/\(search the spec for "Package decision" and "Seed quirk"\)/, '(each is marked **Decision** or **Seed quirk** where it applies in this reference)')
    .trim();
}

/** The README's decisions section (a `###` heading) that holds an area's rows. */
export const AREA_SECTION: Record<Area, string> = {
  authentication: 'authentication',
  'payment-link': 'payment-link',
  'web-checkout': 'web-checkout-and-the-merchant-notification',
  subscription: 'subscription-plan-and-subscription-webhook',
  plan: 'subscription-plan-and-subscription-webhook',
  'subscription-webhook': 'subscription-plan-and-subscription-webhook',
  sandbox: 'whole-platform',
};
const WHOLE_PLATFORM = 'whole-platform';

/** Every description under `node` with its decision lead-ins shortened to a marker linking to `section`. */
export function shortenDecisions<T>(node: T, section = WHOLE_PLATFORM): T {
  if (Array.isArray(node)) return node.map((n) => shortenDecisions(n, section)) as T;
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === 'description' && typeof value === 'string'
        ? value.replace(LEAD_IN, `**[Decision ↗](${DECISIONS_ANCHOR}/${section}):**`)
        : shortenDecisions(value, section);
  }
  return out as T;
}

/**
 * The document the reference is rendered from. `areas` are the area bundles: a path, webhook, tag or
 * component that only one area holds links its decisions to that area's table.
 */
export function docsDocument(platform: any, readme: string, areas: Partial<Record<Area, any>>): any {
  const owners = (get: (doc: any) => string[]) => (key: string) => {
    const found = (Object.keys(areas) as Area[]).filter((a) => get(areas[a]).includes(key));
    return found.length === 1 ? AREA_SECTION[found[0]!] : WHOLE_PLATFORM;
  };
  const sectionOf = {
    paths: owners((d) => Object.keys(d.paths ?? {})),
    webhooks: owners((d) => Object.keys(d.webhooks ?? {})),
    tags: owners((d) => [...(d.tags ?? []).map((t: any) => t.name), introductionTag(d.info.title)]),
  };
  const doc: any = { ...platform };
  doc.info = shortenDecisions(platform.info);
  doc.servers = shortenDecisions(platform.servers);
  for (const key of ['paths', 'webhooks'] as const) {
    doc[key] = Object.fromEntries(Object.entries(platform[key] ?? {}).map(([k, v]) => [k, shortenDecisions(v, sectionOf[key](k))]));
  }
  doc.tags = (platform.tags ?? []).map((t: any) => shortenDecisions(t, sectionOf.tags(t.name)));
  doc.components = Object.fromEntries(
    Object.entries<Record<string, unknown>>(platform.components ?? {}).map(([type, entries]) => {
      const section = owners((d) => Object.keys(d.components?.[type] ?? {}));
      return [type, Object.fromEntries(Object.entries(entries).map(([name, v]) => [name, shortenDecisions(v, section(name))]))];
    }),
  );
  doc.tags = [...doc.tags, { name: DECISIONS_TAG, description: decisionsSection(readme), 'x-displayName': DECISIONS_TAG, 'x-traitTag': true }];
  doc['x-tagGroups'] = [...(doc['x-tagGroups'] ?? []), { name: DECISIONS_TAG, tags: [DECISIONS_TAG] }];
  return doc;
}

async function main(out: string): Promise<void> {
  const platform = JSON.parse(await readFile(join(root, 'generated', 'platform.openapi.json'), 'utf8'));
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const areas = Object.fromEntries(
    await Promise.all(AREAS.map(async (a) => [a, JSON.parse(await readFile(join(root, 'generated', `${a}.openapi.json`), 'utf8'))])),
  );
  const dir = await mkdtemp(join(tmpdir(), 'docs-src-'));
  try {
    const src = join(dir, 'platform.openapi.yaml');
    await writeFile(src, stringify(docsDocument(platform, readme, areas), { lineWidth: 0 }));
    await promisify(execFile)(join(root, 'node_modules', '.bin', 'redocly'), ['build-docs', src, '--output', out, '--inlineBundle'], {
      cwd: root,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: tsx scripts/docs.ts <out.html>');
  await main(out);
}
