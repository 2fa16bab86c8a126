// The reference server serves the HTML reference at /docs, outside the API's validation.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server.ts';

describe('GET /docs', () => {
  let dir: string;
  let withDocs: TestServer;
  let withoutDocs: TestServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'docs-route-'));
    await writeFile(join(dir, 'index.html'), '<!doctype html><title>Payment Platform API</title>');
    withDocs = await startTestServer({ config: { docsFile: join(dir, 'index.html') } });
    withoutDocs = await startTestServer({ config: { docsFile: join(dir, 'missing.html') } });
  });
  afterAll(async () => {
    await withDocs?.close();
    await withoutDocs?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the rendered reference', async () => {
    const res = await withDocs.http.get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('<title>Payment Platform API</title>');
  });

  it('says how to build it when it is missing', async () => {
    const res = await withoutDocs.http.get('/docs');
    expect(res.status).toBe(404);
    expect(res.text).toBe('The HTML reference is not here: DOCS_FILE names no file (in a clone of the repository, `make docs` builds it).');
  });
});
