// `make docs` renders one offline HTML reference of every area and the merchant webhook.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
