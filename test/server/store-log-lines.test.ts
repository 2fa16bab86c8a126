// The sandbox's log lines for what the store tells it (server/store/store-log-lines.ts): levels,
// fields and texts an operator reads, never a value a PostgreSQL message quoted.
import { expect, it } from 'vitest';
import { createLogger } from '../../server/http/logging.ts';
import { encryptionKeySourceOf, storeLogLines } from '../../server/store/store-log-lines.ts';
import { StoreUnavailable } from '../../server/store/store.ts';
import { loadConfig } from '../../server/config.ts';
import { CapturedLogs } from './support/server.ts';

it("says when PGlite's maintenance fails, with the statement and PostgreSQL's code, and when it works again", () => {
  const logs = new CapturedLogs();
  const lines = storeLogLines(createLogger('info', logs));
  lines.onMaintenance({ failed: true, statement: 'VACUUM (ANALYZE) public.cards', error: { message: 'invalid input syntax for type bigint: "[redacted]"', code: '22P02' } });
  lines.onMaintenance({ failed: false, failedPasses: 3 });
  expect(logs.lines).toMatchObject([
    { level: 40, statement: 'VACUUM (ANALYZE) public.cards', error: 'invalid input syntax for type bigint: "[redacted]"', code: '22P02', msg: expect.stringMatching(/^PGlite's maintenance failed .+\(a checkpoint is tried again every 30 s, a vacuum five minutes after the last/) },
    { level: 30, failedPasses: 3, msg: "PGlite's maintenance works again" },
  ]);
});

it('says once per secret, at most 1,000 secrets, that one opened only with the previous key', () => {
  const logs = new CapturedLogs();
  const lines = storeLogLines(createLogger('info', logs));
  for (let i = 0; i < 1_100; i++) lines.onPreviousKeyUsed(`web_checkout_configurations.notification_password:${i % 1_050}`);
  lines.onPreviousKeyUsed('web_checkout_configurations.notification_password:0');
  expect(logs.lines).toHaveLength(1_000);
  expect(new Set(logs.lines.map((l) => l.secret)).size).toBe(1_000);
  expect(logs.lines[0]).toMatchObject({ level: 40, secret: 'web_checkout_configurations.notification_password:0' });
});

it("names where the current encryption key comes from, never the key", () => {
  const key = 'b2'.repeat(32);
  expect(encryptionKeySourceOf(loadConfig({ SANDBOX_ENCRYPTION_KEY: key }))).toBe('SANDBOX_ENCRYPTION_KEY');
  expect(encryptionKeySourceOf(loadConfig({ DATABASE_URL: 'postgres://u:pw@db/x' }))).toBe('derived from DATABASE_URL');
  expect(encryptionKeySourceOf(loadConfig({ DATA_DIR: '.data/x' }))).toBe('the key file beside DATA_DIR');
  expect(encryptionKeySourceOf(loadConfig({ DATA_DIR: 'memory://' }))).toBe('random, in memory');
});

it('says once that the PostgreSQL server cannot be reached, naming it and the network code, and when it answers again', () => {
  const logs = new CapturedLogs();
  const lines = storeLogLines(createLogger('info', logs));
  const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' });
  lines.onReachChange({ reachable: false, error: new StoreUnavailable('The PostgreSQL server at db.example:5432 (the database URL) cannot be reached: the connection was refused', { cause: refused }) });
  lines.onReachChange({ reachable: true, failedCalls: 12 });
  expect(logs.lines).toMatchObject([
    {
      level: 50,
      error: 'The PostgreSQL server at db.example:5432 (the database URL) cannot be reached: the connection was refused',
      code: 'ECONNREFUSED',
      msg: expect.stringMatching(/^The PostgreSQL server cannot be reached: until it answers again, requests that need it answer 500/),
    },
    { level: 30, failedCalls: 12, msg: 'The PostgreSQL server answers again' },
  ]);
  expect(JSON.stringify(logs.lines)).not.toContain('stack');
});
