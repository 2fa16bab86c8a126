// `make docs`: the offline HTML reference (Redocly build-docs) of the joined bundle, made to read
// like a guide. The bundle already carries each area's introduction (a trait tag first in the
// area's tag group, written by scripts/generate.ts); this step adds the README's "Contract
// decisions" tables as a section of their own, and turns every long "**Package decision (the seed
// does not show …):**" lead-in of a description into a short marker ("Decision D12 ↗") that links
// to that decision's own entry, under the tables: where it stands, what the seed says, the decision.
// generated/ keeps the lead-ins: a generator or a validator reading the bundle shows the full text.
//
//   tsx scripts/docs.ts <out.html>
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';

const root = new URL('..', import.meta.url).pathname;

/** The tag (a section of the reference) that carries the decisions tables, and its anchor. */
export const DECISIONS_TAG = 'Contract decisions';
/** The renderer links a tag as `#/<name, lower case, spaces as hyphens>`. */
export const DECISIONS_ANCHOR = `#/${DECISIONS_TAG.toLowerCase().replace(/ /g, '-')}`;

/** The "## Contract decisions" section of the README, without its heading. */
export function decisionsSection(readme: string): string {
  const start = readme.indexOf('\n## Contract decisions\n');
  if (start < 0) throw new Error('README.md has no "## Contract decisions" section');
  const body = readme.slice(start + '\n## Contract decisions\n'.length);
  const end = body.search(/\n## /);
  return (end < 0 ? body : body.slice(0, end))
    .replace(/\(search the spec for "Package decision"[^)]*\)/, '(each package decision is marked **Decision D… ↗** where it applies in this reference, leading to its own entry under these tables; a quirk is marked **Seed quirk**)')
    .trim();
}

/** The heading of the index of every decision the reference marks, each under a heading of its own. */
export const INDEX_HEADING = 'Every decision in this reference';

/** One decision as the contract states it, where it stands. */
export interface Decision {
  /** `D1`, `D2`, … in the order the reference reaches them. */
  id: string;
  /** Where it stands: operationIds, tags or components, the first one reached first. */
  places: string[];
  /** What the seed says, from the lead-in's parenthesis ("" when the lead-in has none). */
  seed: string;
  /** The decision: the paragraph after the lead-in. */
  text: string;
}

/** The renderer's anchor of a `####` heading of the decisions section: `#/<tag slug>/<heading slug>`. */
export const decisionAnchor = (d: Pick<Decision, 'id' | 'places'>) => `${DECISIONS_ANCHOR}/${slug(decisionHeading(d))}`;
/**
 * Its id and the first place it stands in (so the anchor is known when the first marker is written),
 * in letters, digits and spaces only: the renderer's anchor of such a heading is plain to predict.
 */
export const decisionHeading = ({ id, places }: Pick<Decision, 'id' | 'places'>) =>
  `${id} ${places[0]!.replace(/[^A-Za-z0-9 ]/g, '').replace(/ +/g, ' ')}`;
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9 -]/g, '').trim().replace(/ +/g, '-');

const LEAD_IN_WITH_SEED = /\*\*Package decision(?: \(([^)]*)\))?:\*\*/g;

/**
 * Every description under `node` with each decision lead-in ("**Package decision (the seed …):**")
 * turned into a short marker linking to the decision's own entry, which `found` receives.
 */
function markDecisions<T>(node: T, where: string, found: Decision[]): T {
  if (Array.isArray(node)) return node.map((n) => markDecisions(n, where, found)) as T;
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === 'description' && typeof value === 'string' ? markDescription(value, where, found) : markDecisions(value, where, found);
  }
  return out as T;
}

function markDescription(description: string, where: string, found: Decision[]): string {
  return description.replace(LEAD_IN_WITH_SEED, (_lead, seed: string | undefined, offset: number) => {
    const text = decisionText(description.slice(offset + _lead.length));
    const said = (seed ?? '').replace(/\s+/g, ' ');
    const seen = found.find((d) => d.seed === said && d.text === text);
    const decision = seen ?? { id: `D${found.length + 1}`, places: [], seed: said, text };
    if (!decision.places.includes(where)) decision.places.push(where);
    if (!seen) found.push(decision);
    return `**[Decision ${decision.id} ↗](${decisionAnchor(decision)}):**`;
  });
}

/**
 * The decision after a lead-in: the rest of its paragraph up to the next lead-in, or, when the
 * lead-in ends its paragraph, the block after it (a table, a list). A prose paragraph is joined into
 * one line; a table or a list keeps its lines.
 */
export function decisionText(after: string): string {
  const rest = after.replace(/^[ \t]*\n?/, '');
  const block = (text: string) => {
    const end = text.search(/\n\s*\n|\*\*Package decision\b/);
    return (end < 0 ? text : text.slice(0, end)).trim();
  };
  const own = block(rest);
  const text = own || block(rest.replace(/^\s*\n/, ''));
  const lines = text.split('\n').map((l) => l.trim());
  return lines.some((l) => /^(\||- |\* |\d+\. )/.test(l)) ? lines.join('\n') : lines.join(' ');
}

/** The index: one `####` heading per decision, saying where it stands, what the seed says and the decision. */
export function decisionIndex(decisions: Decision[]): string {
  const entries = decisions.map((d) =>
    [
      `#### ${decisionHeading(d)}`,
      '',
      `**Stands in:** ${d.places.map((p) => `\`${p}\``).join(', ')}.`,
      '',
      ...(d.seed ? [`**The seed:** ${d.seed}.`, ''] : []),
      d.text.includes('\n') ? `**Decision:**\n\n${d.text}` : `**Decision:** ${d.text}`,
    ].join('\n'),
  );
  return [`### ${INDEX_HEADING}`, '', 'Each **Decision** marker of this reference leads here, to the decision it stands for.', '', ...entries].join('\n\n');
}

/**
 * The document the reference is rendered from: every decision lead-in shortened to a marker that
 * links to its own entry in the decisions section, which holds the README's tables and the index.
 */
export function docsDocument(platform: any, readme: string, found: Decision[] = []): any {
  const doc: any = { ...platform };
  doc.info = markDecisions(platform.info, 'the whole platform', found);
  doc.servers = markDecisions(platform.servers, 'servers', found);
  doc.tags = (platform.tags ?? []).map((t: any) => markDecisions(t, t.name, found));
  for (const key of ['paths', 'webhooks'] as const) {
    doc[key] = Object.fromEntries(
      Object.entries<Record<string, any>>(platform[key] ?? {}).map(([path, item]) => [
        path,
        Object.fromEntries(Object.entries(item).map(([method, op]) => [method, markDecisions(op, op?.operationId ?? path, found)])),
      ]),
    );
  }
  doc.components = Object.fromEntries(
    Object.entries<Record<string, unknown>>(platform.components ?? {}).map(([type, entries]) => [
      type,
      Object.fromEntries(Object.entries(entries).map(([name, v]) => [name, markDecisions(v, name, found)])),
    ]),
  );
  const description = `${decisionsSection(readme)}\n\n${decisionIndex(found)}`;
  doc.tags = [...doc.tags, { name: DECISIONS_TAG, description, 'x-displayName': DECISIONS_TAG, 'x-traitTag': true }];
  doc['x-tagGroups'] = [...(doc['x-tagGroups'] ?? []), { name: DECISIONS_TAG, tags: [DECISIONS_TAG] }];
  return doc;
}

async function main(out: string): Promise<void> {
  const platform = JSON.parse(await readFile(join(root, 'generated', 'platform.openapi.json'), 'utf8'));
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const dir = await mkdtemp(join(tmpdir(), 'docs-src-'));
  try {
    const src = join(dir, 'platform.openapi.yaml');
    await writeFile(src, stringify(docsDocument(platform, readme), { lineWidth: 0 }));
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
