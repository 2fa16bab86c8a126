// `server/main.ts` stopping as a process, in a file of its own (its tests mostly wait: a stopped
// event loop, a request in flight): a stop that a second signal ends at once, and a store stopped
// for good that ends the command.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, programPid, startProcess } from '../support/processes.ts';
import { AUTH_BUNDLE } from './support/server.ts';
import { slowTokenRequestTo } from './support/slow-request.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** `server/main.ts` started through tsx on a free port of 127.0.0.1, on `dataDir`. */
async function startMain(dataDir: string, logLevel: 'info' | 'warn') {
  const port = await freePort();
  const own = await startProcess(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts'], /listening on http:\/\/\S+/, {
    cwd: ROOT,
    env: { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, API_SPEC: AUTH_BUNDLE, LOG_LEVEL: logLevel, DATABASE_URL: '' },
  });
  return { own, port };
}

describe('server/main.ts stopping', () => {
  it('exits 1 when its store stopped for good: its event loop stood still 8 s (a laptop asleep), so it gave its data directory up', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'main-paused-'));
    const { own } = await startMain(join(dir, 'data'), 'info');
    try {
      const exited = new Promise<number | null>((resolve) => own.child.once('exit', (code) => resolve(code)));
      own.signal('SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, 8_500));
      own.signal('SIGCONT');
      expect(await exited).toBe(1); // it answered 500 to everything, alive, until restarted by hand
      expect(own.output()).toContain('lost its lock');
      expect(own.output()).toContain('The store stopped');
      // Its stop ended: the store closed (a stop whose process ran out of things to wait on exits 1 too, but says no "Stopped").
      expect(own.output()).toContain('"msg":"Stopped"');
    } finally {
      await own.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000); // a start, 8.5 s stopped, the stop: a loaded machine took over 20 s for less

  it('exits 1 when its store stopped for good while the stop let a request finish (its lock removed meanwhile)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'main-drain-lost-'));
    const { own, port } = await startMain(join(dir, 'data'), 'info');
    try {
      const exited = new Promise<number | null>((resolve) => own.child.once('exit', (code) => resolve(code)));
      const program = programPid(own); // not the group: tsx's own relay would SIGKILL it on a loaded machine
      // A request whose body comes 8 s after its head: the stop waits for it, and meanwhile the
      // directory's lock goes (another sandbox may take the directory over).
      const inFlight = slowTokenRequestTo(`http://127.0.0.1:${port}`, () => {
        process.kill(program, 'SIGTERM');
        void rm(join(dir, 'data', 'sandbox.lock'), { recursive: true, force: true });
      }, 8_000).catch((error: Error) => error);
      expect(await exited).toBe(1);
      await inFlight;
      expect(own.output()).toContain('lost its lock');
      expect(own.output()).toContain('"msg":"Stopped"'); // the stop itself ended: its status says the store did not
    } finally {
      await own.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('on a second signal during the stop exits 1 at once, without waiting for the request in flight', async () => {
    const { own, port } = await startMain('memory://', 'warn');
    try {
      const exited = new Promise<number | null>((resolve) => own.child.once('exit', (code) => resolve(code)));
      let second = 0;
      // A request whose body takes 6 s to arrive (its headers sent, the signals come 3 s in): the
      // first SIGTERM would wait for it; a second one, 1.5 s later, ends it.
      const program = programPid(own); // not the group: tsx's own relay would SIGKILL it on a loaded machine
      const inFlight = slowTokenRequestTo(`http://127.0.0.1:${port}`, () => {
        process.kill(program, 'SIGTERM');
        setTimeout(() => {
          second = Date.now();
          process.kill(program, 'SIGTERM');
        }, 1_500);
      }, 6_000).catch((error: Error) => error);
      expect(await exited).toBe(1);
      expect(second).toBeGreaterThan(0);
      expect(Date.now() - second).toBeLessThan(1_000); // at once, not when the request ends
      expect(await inFlight).toBeInstanceOf(Error); // cut, not answered
      expect(own.output()).toContain('Stopping at once: a second signal came before the stop was over');
    } finally {
      await own.stop();
    }
  }, 40_000); // a hang guard: 7.5 s alone, over 20 s once beside a full suite and a review (load average ~5)
});
