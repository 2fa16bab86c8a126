// Contract fuzzing of every operation of the joined bundle, as a permanent attacker: the fuzzer first
// creates what the operations need (fuzz-world.ts), then sends each operation valid, generated,
// mixed, hostile and broken requests (fuzz-support.ts) and checks every answer (fuzz-oracle.ts).
// `make test` runs a short campaign (FUZZ_RUNS per operation, default 8, fixed seed); `make fuzz` a
// long one with a printed summary. Every operation must reach its 2xx at least once (its first
// request is a valid one). A failure prints its reproduction: FUZZ_SEED, FUZZ_OP and the fast-check path.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractValidator, loadPlatform, operationsOf, PLATFORM_BUNDLE } from '../support/contract.ts';
import { startTestServer, type TestServer } from '../server/support/server.ts';
import { contractProblem } from './fuzz-oracle.ts';
import { requestsOf, send, type FuzzRequest } from './fuzz-support.ts';
import { buildWorld, type World } from './fuzz-world.ts';

const SEED = Number(process.env.FUZZ_SEED || 20261122);
const RUNS = Number(process.env.FUZZ_RUNS || 8);
const ONLY = process.env.FUZZ_OP; // one operationId, to reproduce a failure
const SUMMARY = process.env.FUZZ_SUMMARY === '1';

/** Each operation's own seed, from FUZZ_SEED and its id: operations draw different kinds in turn. */
const seedOf = (id: string) => [...id].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, SEED);

const doc = loadPlatform();
const validate = contractValidator(doc);
const everyOperation = operationsOf(doc);
const operations = everyOperation.filter((op) => !ONLY || op.operationId === ONLY);

interface Stats {
  sent: number;
  successes: number;
  statuses: Map<string, number>;
}

function summary(stats: Map<string, Stats>, failures: string[]): string {
  const lines = [`fuzz summary: seed ${SEED}, ${RUNS} runs per operation (2xx = answers that were a success)`];
  for (const [id, s] of stats) {
    const statuses = [...s.statuses].sort().map(([k, n]) => `${k}×${n}`).join(' ');
    const unseen = Object.keys(operations.find((op) => op.operationId === id)!.operation.responses).filter((code) => !/^5/.test(code) && !s.statuses.has(code));
    lines.push(`  ${id.padEnd(32)} 2xx ${String(s.successes).padStart(4)} of ${String(s.sent).padStart(4)}  ${statuses}${unseen.length ? `  (documented, not seen: ${unseen.join(' ')})` : ''}`);
  }
  const none = [...stats].filter(([, s]) => s.successes === 0).map(([id]) => id);
  lines.push(none.length ? `operations without a 2xx: ${none.join(', ')}` : 'every operation reached its 2xx');
  lines.push(failures.length ? `failures (${failures.length}):\n${failures.join('\n')}` : 'failures: none');
  return lines.join('\n');
}

describe('contract fuzzing', () => {
  let server: TestServer;
  let world: World;
  const stats = new Map<string, Stats>();
  const failures: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
    world = await buildWorld(server.url, doc, everyOperation);
  });

  afterAll(async () => {
    if (SUMMARY) console.log(summary(stats, failures));
    await server?.close();
  });

  it.each(operations.map((op) => [op.operationId, op] as const))('%s answers only what the contract documents, and reaches its 2xx', async (id, op) => {
    const s: Stats = { sent: 0, successes: 0, statuses: new Map() };
    stats.set(id, s);
    const requests = requestsOf(doc, op, world);
    const property = fc.asyncProperty(requests.any, async (req: FuzzRequest) => {
      const answer = await send(server.url, req);
      s.sent += 1;
      if (answer.status < 300 && req.kind !== 'path-spelling') s.successes += 1;
      s.statuses.set(String(answer.status), (s.statuses.get(String(answer.status)) ?? 0) + 1);
      const problem = contractProblem(doc, validate, op, req.kind, answer);
      if (problem) {
        const body = req.body instanceof FormData ? '(multipart)' : req.body === undefined ? '(none)' : JSON.stringify(String(req.body).slice(0, 400));
        const errors = server.logs.lines.filter((l) => l.level >= 50).slice(-1).map((l) => l.err?.message ?? l.msg);
        throw new Error(`${req.kind} ${req.method} ${req.path.slice(0, 300)}: ${problem}\n    headers ${JSON.stringify(req.headers).slice(0, 200)} body ${body}\n    server log: ${errors.join(' ')}`);
      }
    });
    // The first request is a valid one, so that even the shortest campaign reaches the 2xx.
    const [first] = fc.sample(requests.valid, { seed: seedOf(id), numRuns: 1 });
    const details = await fc.check(property, { seed: seedOf(id), numRuns: RUNS, examples: [[first!]], endOnFailure: false });
    if (details.failed) {
      const reproduction = `FUZZ_SEED=${SEED} FUZZ_OP=${id} (fast-check seed ${details.seed}, path "${details.counterexamplePath}")`;
      failures.push(`  ${id}: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n    reproduce: ${reproduction}`);
    }
    // The server keeps serving after whatever it was sent.
    const alive = await fetch(`${server.url}/sandbox/v1/jwks`);
    expect(alive.status).toBe(200);
    expect(details.failed ? failures[failures.length - 1] : undefined).toBeUndefined();
    expect(s.successes, `${id} got no 2xx in ${s.sent} requests: ${[...s.statuses].map(([k, n]) => `${k}×${n}`).join(' ')}`).toBeGreaterThan(0);
  }, 300_000);
});
