// Contract fuzzing of every operation of the joined bundle (see fuzz-support.ts). `make test` runs a
// short campaign (FUZZ_RUNS per operation, default 8, fixed seed); `make fuzz` a long one with a
// printed summary. A failure prints its reproduction: FUZZ_SEED, FUZZ_OP and the fast-check path.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractValidator, loadPlatform, operationsOf, PLATFORM_BUNDLE } from '../support/contract.ts';
import { ADMIN, createLink, createSeller } from '../server/support/payment-link.ts';
import { basic, startTestServer, tokenForm, type TestServer } from '../server/support/server.ts';
import { contractProblem, requestsOf, send, type Credentials } from './fuzz-support.ts';

const SEED = Number(process.env.FUZZ_SEED || 20261122);
const RUNS = Number(process.env.FUZZ_RUNS || 8);
const ONLY = process.env.FUZZ_OP; // one operationId, to reproduce a failure
const SUMMARY = process.env.FUZZ_SUMMARY === '1';

/**
 * Answers the contract does not document yet but should (reported to the contract's owner): the
 * server's answer is the right one, the contract lacks the status. Counted in the summary, not failed.
 */
const KNOWN_CONTRACT_GAPS: Array<{ operations: RegExp; status: number; kind: string; why: string }> = [];
const knownGap = (id: string, kind: string, status: number) =>
  KNOWN_CONTRACT_GAPS.find((g) => g.operations.test(id) && g.status === status && g.kind === kind);

const doc = loadPlatform();
const validate = contractValidator(doc);
const operations = operationsOf(doc).filter((op) => !ONLY || op.operationId === ONLY);

describe('contract fuzzing', () => {
  let server: TestServer;
  let creds: Credentials;
  const stats = new Map<string, { sent: number; statuses: Map<string, number> }>();
  const failures: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
    const seller = await createSeller(server);
    const link = await createLink(server, seller.sellerId);
    creds = {
      token: seller.token,
      admin: ADMIN,
      basic: basic(seller.clientId, seller.clientSecret),
      tokenForm: tokenForm({ client_id: seller.clientId, client_secret: seller.clientSecret }),
      ids: { short_id: [link.short_id], link_id: [link.link_id], seller_id: [seller.sellerId] },
    };
  });

  afterAll(async () => {
    if (SUMMARY) {
      const lines = [`fuzz summary: seed ${SEED}, ${RUNS} runs per operation`];
      for (const [id, s] of stats) lines.push(`  ${id.padEnd(36)} ${String(s.sent).padStart(5)} requests  ${[...s.statuses].sort().map(([k, n]) => `${k}×${n}`).join(' ')}`);
      lines.push(`known contract gaps (not failed): ${KNOWN_CONTRACT_GAPS.map((g) => g.why).join('; ')}`);
      lines.push(failures.length ? `failures (${failures.length}):\n${failures.join('\n')}` : 'failures: none');
      console.log(lines.join('\n'));
    }
    await server?.close();
  });

  it.each(operations.map((op) => [op.operationId, op] as const))('%s answers only what the contract documents', async (id, op) => {
    const s = { sent: 0, statuses: new Map<string, number>() };
    stats.set(id, s);
    const property = fc.asyncProperty(requestsOf(doc, op, creds), async (req) => {
      const answer = await send(server.url, req);
      s.sent += 1;
      const key = knownGap(id, req.kind, answer.status) ? `${answer.status}(known gap)` : `${answer.status}`;
      s.statuses.set(key, (s.statuses.get(key) ?? 0) + 1);
      if (key.endsWith('(known gap)')) return;
      const problem = contractProblem(doc, validate, op, answer);
      if (problem) {
        const body = typeof req.body === 'string' ? req.body.slice(0, 400) : req.body ? '(multipart)' : '(none)';
        const errors = server.logs.lines.filter((l) => l.level >= 50).slice(-1).map((l) => l.err?.message ?? l.msg);
        throw new Error(`${req.kind} ${req.method} ${req.path}: ${problem}\n    headers ${JSON.stringify(req.headers).slice(0, 200)} body ${body}\n    server log: ${errors.join(' ')}`);
      }
    });
    const details = await fc.check(property, { seed: SEED, numRuns: RUNS, endOnFailure: false });
    if (details.failed) {
      const reproduction = `FUZZ_SEED=${SEED} FUZZ_OP=${id} (fast-check seed ${details.seed}, path "${details.counterexamplePath}")`;
      failures.push(`  ${id}: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n    reproduce: ${reproduction}`);
    }
    // The server keeps serving after whatever it was sent.
    const alive = await fetch(`${server.url}/sandbox/v1/jwks`);
    expect(alive.status).toBe(200);
    expect(details.failed ? failures[failures.length - 1] : undefined).toBeUndefined();
  }, 300_000);
});
