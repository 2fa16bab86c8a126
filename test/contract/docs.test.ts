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
import { AREA_SECTION, DECISIONS_ANCHOR } from '../../scripts/docs.ts';

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

  it('shows each decision as a short marker linking to its table, none as the long lead-in', () => {
    expect(html).not.toContain('Package decision');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const sections = [...readme.slice(readme.indexOf('## Contract decisions')).matchAll(/^### (.+)$/gm)].map((m) =>
      m[1]!.toLowerCase().replace(/,/g, '').replace(/ /g, '-'),
    );
    for (const section of Object.values(AREA_SECTION)) expect(sections).toContain(section);
    const links = [...html.matchAll(new RegExp(`\\[Decision ↗\\]\\(${DECISIONS_ANCHOR}/([a-z-]+)\\)`, 'g'))].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(100);
    for (const link of new Set(links)) expect(sections).toContain(link);
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
      // A decision marker is a link to the decisions tables, which the page shows.
      const marker = page.locator(`a[href^="${DECISIONS_ANCHOR}/"]`).first();
      await marker.click();
      await expect.poll(() => page.evaluate(() => location.hash), { timeout: 10_000 }).toMatch(/^#\/contract-decisions\//);
      const target = decodeURIComponent((await page.evaluate(() => location.hash)).slice(2));
      const table = page.locator(`[id="${target}"]`);
      await expect.poll(() => table.count(), { timeout: 10_000 }).toBe(1);
      expect(await table.innerText()).toContain('The seed says');
    } finally {
      await browser.close();
    }
  });
});
