// What one SQL statement costs in PGlite itself, with no server around it: PGlite on this thread
// (no worker, no message), on one CPU as bench/server.ts pins the server, statements one after the
// other. Sets the floor under the reference server's throughput on PGlite: each request of
// bench/server.ts runs 1-4 statements (bench/RESULTS.md, "Where the time goes").
// Not part of `make bench`; its figures are quoted in bench/RESULTS.md.
// Run: taskset -c 1 node bench/pglite-statements.mjs
import { PGlite } from '@electric-sql/pglite';

const N = Number(process.env.BENCH_STATEMENTS ?? 4000);
const db = await PGlite.create();
await db.exec('CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 1000) g');
const cases = [
  ['SELECT 1 (extended protocol: query with parameters)', () => db.query('SELECT 1', [])],
  ['primary-key lookup with a parameter', () => db.query('SELECT * FROM t WHERE id = $1', [5])],
  ['primary-key lookup, simple protocol (exec)', () => db.exec('SELECT * FROM t WHERE id = 5')],
];
for (const [label, run] of cases) {
  for (let i = 0; i < 200; i++) await run(); // warm-up
  const started = performance.now();
  for (let i = 0; i < N; i++) await run();
  const ms = (performance.now() - started) / N;
  console.log(`${label}: ${ms.toFixed(3)} ms per statement (${Math.round(1000 / ms)} per second)`);
}
await db.close();
