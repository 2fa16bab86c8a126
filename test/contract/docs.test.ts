// `make docs` renders one offline HTML reference of every area and the merchant webhook.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { loadPlatform, operationsOf } from '../support/contract.ts';

const run = promisify(execFile);
const doc = loadPlatform();
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
});
