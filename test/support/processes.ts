// Child processes for tests (the Prism mock, the reference server): started on a free loopback
// port, awaited until they say they listen, and always stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface Started {
  child: ChildProcess;
  output: () => string;
  /** Sends a signal to the whole process group: the command and what it spawned (tsx and npx run the program in a child). */
  signal: (signal: NodeJS.Signals) => void;
  /** Whether the command has neither exited nor been ended by a signal. */
  running: () => boolean;
  stop: () => Promise<void>;
}

/** Spawns a command and resolves once its output matches `ready`; rejects on exit or timeout. */
export async function startProcess(
  command: string,
  args: string[],
  ready: RegExp,
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string; onOutput?: (log: string) => void } = {},
): Promise<Started> {
  // A process group of its own, so that a signal reaches the program itself, not only the launcher
  // (tsx and npx spawn it as a child: a SIGKILL to the launcher alone would leave it running).
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // the group is gone already
    }
  };
  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (!running()) return signal('SIGKILL'); // leftovers of the group
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${command} did not become ready in time:\n${log}`));
    }, options.timeoutMs ?? 60_000);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      options.onOutput?.(log);
      if (ready.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before it was ready:\n${log}`));
    });
  });
  return { child, output: () => log, signal, running, stop };
}

/**
 * The pid of the program a launcher runs (tsx runs it as its only child), from Linux's /proc. A signal
 * sent there reaches the program alone: tsx, given one too, passes it on and, when the program does
 * not confirm it within 30 ms (a loaded machine), sends SIGKILL.
 */
export function programPid(started: Started): number {
  const pid = started.child.pid!;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  if (children.length !== 1) throw new Error(`expected one child of ${pid}, found ${children.length}`);
  return Number(children[0]);
}
