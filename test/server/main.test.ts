// `server/main.ts` as a process: it starts on a data directory, prints how to get a token, serves
// one, and on SIGTERM finishes the request in flight and exits 0 (main-stop.test.ts: the stops that end it at once).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, programPid, startProcess, type Started } from '../support/processes.ts';
import { openStore } from '../../server/store/open-store.ts';
import { AUTH_BUNDLE, tokenForm } from './support/server.ts';
import { slowTokenRequestTo } from './support/slow-request.ts';
import { DATABASE_URL, freshPostgresSchemaUrl, listeningInstances, terminateListeners } from './support/stores.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

let dataDir: string;
let server: Started;
let url: string;
beforeAll(async () => {
  // The data directory inside a directory of its own, which also takes the key file the server
  // writes beside it (`<DATA_DIR>.encryption-key`), so that removing it leaves nothing behind.
  dataDir = join(await mkdtemp(join(tmpdir(), 'main-')), 'data');
  // An HTML reference of its own (a clone has one only after `make docs`): the banner names it.
  const docsFile = join(dirname(dataDir), 'reference.html');
  await writeFile(docsFile, '<!doctype html><title>reference</title>');
  const port = await freePort();
  server = await startProcess(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts'], /listening on http:\/\/\S+/, {
    cwd: ROOT,
    env: { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, API_SPEC: AUTH_BUNDLE, LOG_LEVEL: 'warn', DATABASE_URL: '', DOCS_FILE: docsFile },
  });
  url = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await server?.stop();
  await rm(dirname(dataDir), { recursive: true, force: true });
});

/** A token request whose body is sent in two parts, `pauseMs` apart: in flight in between. */
const slowTokenRequest = (onHeadersSent: () => void, pauseMs: number) => slowTokenRequestTo(url, onHeadersSent, pauseMs);


describe('server/main.ts', () => {
  it('prints the URL, the demo credentials and a first curl', () => {
    const out = server.output();
    expect(out).toContain(`listening on ${url}`);
    expect(out).toContain('demo-seller-client / demo-seller-secret');
    expect(out).toContain(`curl -s ${url}/authentication/oauth2/-core/access_token`);
    expect(out).not.toContain('X-Forwarded-For'); // TRUST_PROXY unset: no proxy is believed
    expect(out).toContain(`  reference:    ${url}/docs\n`);
  });

  it('--help names every variable of the README\'s "Variables" table', async () => {
    const readme = await readFile(`${ROOT}server/README.md`, 'utf8');
    const table = readme.slice(readme.indexOf('| variable | default | meaning |')).split('\n\n')[0]!;
    const names = [...new Set(table.split('\n').flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)))];
    expect(names.length).toBeGreaterThan(20);
    const { stdout } = await promisify(execFile)(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts', '--help'], { cwd: ROOT });
    expect(names.filter((name) => !new RegExp(`\\b${name}\\b`).test(stdout))).toEqual([]);
  });

  it('--version and -v print the package version and exit 0', async () => {
    const { version } = JSON.parse(await readFile(`${ROOT}server/package.json`, 'utf8'));
    const printed = await Promise.all(['--version', '-v'].map((flag) => promisify(execFile)(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts', flag], { cwd: ROOT })));
    expect(printed.map(({ stdout, stderr }) => [stdout, stderr])).toEqual([[`@payment-platform/sandbox ${version}\n`, ''], [`@payment-platform/sandbox ${version}\n`, '']]);
  });

  it('issues a token to the demo client it seeded', async () => {
    const res = await fetch(`${url}/authentication/oauth2/-core/access_token`, { method: 'POST', body: new URLSearchParams(tokenForm()) });
    expect(res.status).toBe(200);
    expect((await res.json()).token_type).toBe('Bearer');
  });

  it('refuses a second start on its port in one line that says what to do, exit code 1', async () => {
    const port = new URL(url).port;
    const started = promisify(execFile)(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, HOST: '127.0.0.1', PORT: port, DATA_DIR: 'memory://', DATABASE_URL: '', LOG_LEVEL: 'warn' },
    });
    const failure = await started.then(() => undefined, (error: { code: number; stdout: string; stderr: string }) => error);
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toBe(
      `Cannot start the sandbox: The port ${port} of 127.0.0.1 is in use (another sandbox, or another program): stop it, or give another port (0 picks a free one)\n`,
    );
    expect((await fetch(`${url}/sandbox/v1/jwks`)).status).toBe(200); // the first one still serves
  });

  it('on SIGTERM finishes the request in flight, then exits 0', async () => {
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    // As systemd or `kill -TERM -<pgid>` sends it to a process group, the program may hear it twice
    // within milliseconds (directly, and passed on by make or tsx), which is still one stop. Sent to
    // the program itself: tsx's own relay would SIGKILL it on a loaded machine (programPid).
    const program = programPid(server);
    const inFlight = slowTokenRequest(() => {
      process.kill(program, 'SIGTERM');
      setTimeout(() => process.kill(program, 'SIGTERM'), 30);
    }, 600);
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).token_type).toBe('Bearer');
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/sandbox/v1/jwks`)).rejects.toThrow(); // no longer accepting
  });

});

describe('server/main.ts on an address beyond this machine', () => {
  it('does not print a demo client secret or an admin token of one\'s own (stdout ends up in CI logs)', async () => {
    const own = await startProcess(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts'], /listening on http:\/\/\S+/, {
      cwd: ROOT,
      env: {
        PORT: '0', HOST: '127.0.0.1', DATA_DIR: 'memory://', API_SPEC: AUTH_BUNDLE, LOG_LEVEL: 'warn', DATABASE_URL: '',
        SANDBOX_DEMO_CLIENT_SECRET: 'Sup3r-Secret-Demo-Value', SANDBOX_ADMIN_TOKEN: '0123456789abcdef-admin', TRUST_PROXY: 'loopback, 10.1.0.0/16',
        DOCS_FILE: join(dirname(dataDir), 'no-such-reference.html'), // a package packed without `make docs`
      },
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 50)); // the banner follows its first line
      const out = own.output();
      expect(out).toContain('demo client:  demo-seller-client / $SANDBOX_DEMO_CLIENT_SECRET');
      expect(out).toContain('-d client_secret=$SANDBOX_DEMO_CLIENT_SECRET');
      expect(out).toContain('admin token:  (the value of SANDBOX_ADMIN_TOKEN)');
      expect(out).not.toContain('Sup3r-Secret-Demo-Value');
      expect(out).not.toContain('0123456789abcdef-admin');
      expect(out).toContain('  proxies:      X-Forwarded-For believed from loopback, 10.1.0.0/16 (TRUST_PROXY)\n');
      expect(out).toContain('  reference:    none in this build (DOCS_FILE names no file; `make docs` in a clone writes it)\n');
      expect(out).not.toContain('/docs\n');
    } finally {
      await own.stop();
    }
  });

  it('refuses a bad option in the words it was given: the option\'s name, a negative number as a value, the variable otherwise', async () => {
    const refusal = async (args: string[], env: Record<string, string> = {}) => {
      const started = promisify(execFile)(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, PORT: '0', DATA_DIR: 'memory://', DATABASE_URL: '', ...env },
      });
      const failure = await started.then(() => undefined, (error: { code: number; stderr: string }) => error);
      return [failure?.code, failure?.stderr.split('\n')[0]];
    };
    const results = await Promise.all([
      refusal(['--port', '-1']),
      refusal(['--database-url', 'mysql://shop:s3cret@db.example/shop']),
      refusal([], { PORT: 'abc' }),
      refusal(['--data-dir', 'file:///x']),
      refusal(['--prot', '1']),
    ]);
    expect(results).toEqual([
      [1, '--port must be a port number from 0 to 65535 (0 picks a free one), not "-1"'],
      [1, '--database-url must be a PostgreSQL URL (postgres://user:password@host:5432/database), written without spaces; this one is not'],
      [1, 'PORT must be a port number from 0 to 65535 (0 picks a free one), not "abc"'],
      [1, '--data-dir must be a directory, or memory:// to keep nothing on disk; got "file:///x"'],
      [1, "Unknown option '--prot' (did you mean --port?)"],
    ]);
  });

  it('refuses to start with the default admin token: a message on stderr, exit code 1, nothing listening', async () => {
    // 192.0.2.1 (TEST-NET-1) is on no interface here: had the check failed, listen would fail too.
    const started = promisify(execFile)(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, HOST: '192.0.2.1', PORT: '0', SANDBOX_ADMIN_TOKEN: '', DATA_DIR: 'memory://', DATABASE_URL: '' },
    });
    const failure = await started.then(() => undefined, (error: { code: number; stdout: string; stderr: string }) => error);
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr.split('\n')[0]).toBe(
      'Refusing to listen on 192.0.2.1 with the documented default SANDBOX_ADMIN_TOKEN: anyone who can reach this address ' +
        'could create sellers and read their notifications. Set SANDBOX_ADMIN_TOKEN to a secret of your own, or listen on ' +
        'this machine only (HOST=127.0.0.1, the default).',
    );
  });
});

describe.runIf(DATABASE_URL)('server/main.ts on PostgreSQL (DATABASE_URL)', () => {
  it('listens for the other instances, and when that connection is lost says so in its log, then that it listens again', async () => {
    const databaseUrl = await freshPostgresSchemaUrl();
    const own = await startProcess(`${ROOT}node_modules/.bin/tsx`, ['server/main.ts'], /listening on http:\/\/\S+/, {
      cwd: ROOT,
      env: { PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, API_SPEC: AUTH_BUNDLE, LOG_LEVEL: 'info' },
    });
    const other = await openStore({ databaseUrl });
    const lineOf = (msg: string) => {
      const found = own.output().match(new RegExp(`^\\{.*"msg":"${msg}.*$`, 'm'));
      return found && (JSON.parse(found[0]) as Record<string, unknown>);
    };
    try {
      await expect.poll(() => listeningInstances(other), { timeout: 10_000 }).toBe(1); // its delivery worker's
      await terminateListeners(other);
      await expect.poll(() => lineOf('The connection that hears the other instances on this PostgreSQL was lost or refused'), { timeout: 5_000 }).toMatchObject({
        level: 40,
        error: expect.stringMatching(/terminat/i),
        code: '57P01', // admin_shutdown
        retryInMs: 1_000,
      });
      await expect.poll(() => lineOf('Listening for the other instances on this PostgreSQL, after failed attempts: what they announced meanwhile is read now'), { timeout: 5_000 }).toMatchObject({ level: 30, failedAttempts: 1 });
      expect(await listeningInstances(other)).toBe(1);
    } finally {
      await other.close();
      await own.stop();
    }
  });
});
