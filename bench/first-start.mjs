// A first start on a new data directory, as `npx @payment-platform/sandbox` in a new folder: the
// built server (server/dist, `make build-server`) started with DATA_DIR pointing at a directory that
// does not exist yet, time to its first 200 (`GET /sandbox/v1/jwks`) and its peak memory (VmHWM)
// at that moment; then a restart on the directory it made. Median of BENCH_RUNS (default 3).
// Not part of `make bench`; its figures are quoted in bench/RESULTS.md and server/README.md.
// Run: make build-server && node bench/first-start.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = process.env.BENCH_MAIN ?? new URL('../server/dist/main.js', import.meta.url).pathname; // BENCH_MAIN: another build
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

async function start(dataDir) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, stdio: 'ignore' });
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/sandbox/v1/jwks`).then((r) => r.ok, () => false);
    if (ok) break;
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = performance.now() - started;
  const peakMiB = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
  child.kill('SIGINT');
  await new Promise((r) => child.once('exit', r));
  return { ms, peakMiB };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const first = [];
const again = [];
for (let i = 0; i < RUNS; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'first-start-'));
  try {
    first.push(await start(join(dir, 'data')));
    again.push(await start(join(dir, 'data')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
for (const [label, runs] of [['first start on a new data directory', first], ['restart on the directory it made', again]]) {
  console.log(`${label}: first 200 after ${Math.round(median(runs.map((r) => r.ms)))} ms, peak ${Math.round(median(runs.map((r) => r.peakMiB)))} MiB (median of ${RUNS})`);
}
