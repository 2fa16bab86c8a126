// `make docs` renders one offline HTML reference of every area and the merchant webhook.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { loadPlatform, operationsOf } from '../support/contract.ts';
import { AREAS, introductionTag } from '../../scripts/areas.ts';
import { DECISIONS_ANCHOR, INDEX_HEADING, decisionAnchor, docsDocument, type Decision } from '../../scripts/docs.ts';

const run = promisify(execFile);
const doc = loadPlatform();
const root = new URL('../../', import.meta.url).pathname;

/** Each area's own introduction (its `info`), as the area bundle carries it. */
const introductions = await Promise.all(
  AREAS.map(async (area) => {
    const { info } = JSON.parse(await readFile(join(root, 'generated', `${area}.openapi.json`), 'utf8'));
    // Text as the page shows it: the first line of the description without Markdown marks.
    const opening = info.description.split('\n')[0].replace(/[`*]/g, '').slice(0, 60);
    return { area, title: info.title as string, summary: info.summary as string, opening: opening as string };
  }),
);
let dir: string;
let html: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docs-'));
  const out = join(dir, 'index.html');
  await run('make', ['-s', 'docs', `DOCS_OUT=${out}`], { env: { ...process.env, CI: 'true' } });
  html = await readFile(out, 'utf8');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the HTML reference', () => {
  it('carries every operation of every area', () => {
    const operations = operationsOf(doc);
    expect(operations.filter((o) => !o.path.startsWith('/sandbox/v1/')).length).toBe(15);
    for (const op of operations) {
      expect(html, op.operationId).toContain(`"operationId":"${op.operationId}"`);
      expect(html, op.operationId).toContain(JSON.stringify(op.operation.summary).slice(1, -1));
    }
  });

  it('carries the merchant notification webhook', () => {
    const webhooks = operationsOf(doc, 'webhooks');
    expect(webhooks.map((w) => w.operationId)).toEqual(['notifyCheckoutResult']);
    expect(html).toContain(`"operationId":"notifyCheckoutResult"`);
    expect(html).toContain('"webhooks":');
  });

  it('carries every area\'s introduction, first in the area\'s tag group', () => {
    for (const { title } of introductions) {
      const tag = doc.tags.find((t: { name: string }) => t.name === introductionTag(title));
      expect(tag, title).toMatchObject({ 'x-traitTag': true });
      expect(doc['x-tagGroups'].find((g: { name: string }) => g.name === title)?.tags[0], title).toBe(tag.name);
    }
  });

  it('shows each decision as a short marker linking to its own entry, none as the long lead-in', () => {
    expect(html).not.toContain('Package decision');
    // The README's tables are carried whole, each area under its own heading.
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const [, heading] of readme.slice(readme.indexOf('## Contract decisions')).matchAll(/^### (.+)$/gm)) {
      expect(html).toContain(`### ${heading}`);
    }
    // Every marker links to an entry of the index, and every entry is linked by at least one marker.
    const markers = [...html.matchAll(/\*\*\[Decision (D\d+) ↗\]\(([^)]+)\):\*\*/g)].map(([, id, href]) => ({ id: id!, href: href! }));
    const entries = [...html.matchAll(/#### (D\d+) ([^\\]+)\\n/g)].map(([, id, where]) => ({ id: id!, href: decisionAnchor({ id: id!, places: [where!] }) }));
    expect(html).toContain(`### ${INDEX_HEADING}`);
    expect(entries.length).toBeGreaterThan(150);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    expect(new Set(markers.map((m) => m.id))).toEqual(new Set(entries.map((e) => e.id)));
    for (const m of markers) expect(m.href, m.id).toBe(entries.find((e) => e.id === m.id)!.href);
  });

  it('lists each decision with where it stands, what the seed says and the decision itself', () => {
    const platform = JSON.parse(readFileSync(join(root, 'generated', 'platform.openapi.json'), 'utf8'));
    const decisions: Decision[] = [];
    docsDocument(platform, readFileSync(join(root, 'README.md'), 'utf8'), decisions);
    // The bundle's lead-ins, counted from the source: each became an entry or joined one.
    const leadIns = JSON.stringify(platform).match(/\*\*Package decision/g)!.length;
    expect(decisions.length).toBeLessThanOrEqual(leadIns);
    expect(decisions.reduce((n, d) => n + d.places.length, 0)).toBeGreaterThanOrEqual(decisions.length);
    const dateRange = decisions.find((d) => d.places.includes('listPaymentLinks') && d.text.startsWith('422 `invalid_date_range`'));
    expect(dateRange?.seed, 'the 422 decision of listPaymentLinks').toBe('the seed does not say when 422 happens');
    for (const d of decisions) {
      expect(d.text, d.id).not.toMatch(/Package decision|^\s*$/);
      // The page embeds the document as JSON (`<` as \u003c): the entry's first line, as written there.
      const firstLine = JSON.stringify(d.text.split('\n')[0]!.slice(0, 60)).slice(1, -1).replace(/</g, '\\u003c');
      expect(html, d.id).toContain(d.text.includes('\n') ? `**Decision:**\\n\\n${firstLine}` : `**Decision:** ${firstLine}`);
    }
  });

  it('is one offline file: no script, style sheet or font loaded from elsewhere', () => {
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/i);
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/i);
    expect(html).toContain('<title>Payment Platform API</title>');
  });
});

describe('the HTML reference, rendered in Chromium', () => {
  it('shows every operation and the webhook, loading no script, style sheet or font from elsewhere', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const external: string[] = [];
      page.on('request', (r) => {
        const local = /^(file|data|blob):/.test(r.url());
        // The renderer's "API docs by" badge image falls back silently offline; code and styles may not.
        if (!local && r.resourceType() !== 'image') external.push(`${r.resourceType()} ${r.url()}`);
      });
      await page.goto(`file://${join(dir, 'index.html')}`);
      // The page renders lazily while it is scrolled: scroll and collect the operation anchors it
      // links (`#/<tag>/<operationid>`), until every operation and the webhook has shown up.
      const wanted = [...operationsOf(doc), ...operationsOf(doc, 'webhooks')].map((op) => op.operationId.toLowerCase());
      const missing = async () => {
        const seen: string[] = await page.evaluate(() => {
          const w = window as unknown as { seen?: Set<string> };
          w.seen ??= new Set<string>();
          for (const a of document.querySelectorAll('a[href^="#/"]')) w.seen.add(a.getAttribute('href')!.split('/').pop()!);
          // A tag's overview lists its first operations and folds the rest behind "+ Show".
          for (const el of document.querySelectorAll('button, span, div')) {
            if (el.childElementCount === 0 && /^\+?\s*Show$/.test(el.textContent?.trim() ?? '')) (el as HTMLElement).click();
          }
          window.scrollBy(0, window.innerHeight);
          return [...w.seen];
        });
        return wanted.filter((id) => !seen.includes(id));
      };
      await expect.poll(missing, { timeout: 20_000, interval: 100 }).toEqual([]);
      const text = await page.evaluate(() => document.body.innerText);
      expect(text).toContain('Payment Platform API');
      expect(text).toContain('Merchant notifications');
      expect(external).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('shows every area\'s introduction, and a decision marker leads to the decisions tables', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`file://${join(dir, 'index.html')}`);
      // Each introduction is a section of its own (`#/<tag name>`): open it and read what it shows.
      for (const { title, summary, opening } of introductions) {
        const id = introductionTag(title).toLowerCase().replace(/ /g, '-');
        await page.goto(`file://${join(dir, 'index.html')}#/${id}`);
        const section = page.locator(`[id="${id}"]`);
        await expect.poll(() => section.count(), { timeout: 10_000 }).toBe(1);
        const text = (await section.innerText()).replace(/\s+/g, ' ');
        expect(text, title).toContain(summary);
        expect(text, title).toContain(opening.replace(/\s+/g, ' '));
      }
      // The sidebar groups each area under its title, its introduction first.
      const sidebar = await page.evaluate(() => document.body.innerText);
      for (const { title } of introductions) expect(sidebar).toContain(`${title}\nIntroduction`);
      // A decision marker leads to its own entry, which the page shows in view.
      const fresh = await browser.newPage();
      await fresh.goto(`file://${join(dir, 'index.html')}#/payment-links/listpaymentlinks`);
      const marker = fresh.locator(`a[href^="${DECISIONS_ANCHOR}/d"][href$="-listpaymentlinks"]`).first();
      await expect.poll(() => marker.count(), { timeout: 10_000 }).toBe(1);
      const href = (await marker.getAttribute('href'))!;
      const id = /Decision (D\d+)/.exec(await marker.innerText())![1]!;
      await marker.click();
      await expect.poll(() => fresh.evaluate(() => location.hash), { timeout: 10_000 }).toBe(href);
      const entry = fresh.locator(`[id="${href.slice(1)}"]`);
      await expect.poll(() => entry.count(), { timeout: 10_000 }).toBe(1);
      expect(await entry.innerText()).toMatch(new RegExp(`^${id} listPaymentLinks`));
      await expect.poll(() => entry.evaluate((e) => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }), { timeout: 10_000 }).toBe(true);
      // The first, a middle and the last entry, each opened from its link, show in view too (the page
      // renders the headings near the one shown, so each is opened in turn).
      const targets = [...new Set([...html.matchAll(/↗\]\((#[^)]+)\)/g)].map((m) => m[1]!))];
      for (const target of [targets[0]!, targets[Math.floor(targets.length / 2)]!, targets.at(-1)!]) {
        await fresh.goto(`file://${join(dir, 'index.html')}${target}`);
        const heading = fresh.locator(`h4[id="${target.slice(1)}"]`);
        await expect.poll(() => heading.count(), { timeout: 10_000 }).toBe(1);
        await expect.poll(() => heading.evaluate((e) => e.getBoundingClientRect().top >= 0 && e.getBoundingClientRect().bottom <= innerHeight), { timeout: 10_000 }).toBe(true);
      }
    } finally {
      await browser.close();
    }
  });
});
