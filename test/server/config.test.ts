// Safe defaults: the sandbox listens on this machine only, and refuses any other address while its
// admin token is the documented default or a short one; private notification URLs only on this machine;
// data in memory (memory://) or in a directory, never in another URL PGlite would read its own way.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_ADMIN_TOKEN, isLoopback, loadConfig } from '../../server/config.ts';

describe('where the sandbox listens', () => {
  it('listens on 127.0.0.1 with the documented admin token by default', () => {
    const config = loadConfig({});
    expect(config.host).toBe('127.0.0.1');
    expect(config.sandboxAdminToken).toBe(DEFAULT_SANDBOX_ADMIN_TOKEN);
    expect(DEFAULT_SANDBOX_ADMIN_TOKEN).toBe('sandbox-admin-token');
  });

  it.each(['0.0.0.0', '::', '192.168.1.20', 'sandbox.internal'])('refuses HOST=%s with the default admin token, saying what to set', (host) => {
    expect(() => loadConfig({ HOST: host })).toThrow(
      `Refusing to listen on ${host} with the documented default SANDBOX_ADMIN_TOKEN: anyone who can reach this address could ` +
        'create sellers and read their notifications. Set SANDBOX_ADMIN_TOKEN to a secret of your own, or listen on this ' +
        'machine only (HOST=127.0.0.1, the default).',
    );
    expect(() => loadConfig({ HOST: host, SANDBOX_ADMIN_TOKEN: DEFAULT_SANDBOX_ADMIN_TOKEN })).toThrow(/SANDBOX_ADMIN_TOKEN/);
  });

  it('listens on any address once the admin token is the operator’s own', () => {
    const config = loadConfig({ HOST: '0.0.0.0', SANDBOX_ADMIN_TOKEN: 'a-token-of-our-own' });
    expect(config).toMatchObject({ host: '0.0.0.0', sandboxAdminToken: 'a-token-of-our-own' });
  });

  it('refuses an admin token under 16 characters on an address others can reach, not on this machine', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0', SANDBOX_ADMIN_TOKEN: 'fifteen-chars!!' })).toThrow(
      'Refusing to listen on 0.0.0.0 with a SANDBOX_ADMIN_TOKEN of 15 characters: anyone who can reach this address could ' +
        'guess it. Give one of at least 16 random characters (openssl rand -hex 16), or listen on this machine only ' +
        '(HOST=127.0.0.1, the default).',
    );
    expect(loadConfig({ HOST: '0.0.0.0', SANDBOX_ADMIN_TOKEN: 'sixteen-chars!!!' }).sandboxAdminToken).toBe('sixteen-chars!!!');
    expect(loadConfig({ HOST: '127.0.0.1', SANDBOX_ADMIN_TOKEN: 'short' }).sandboxAdminToken).toBe('short');
  });

  it('allows private notification URLs by default on this machine only; the setting overrides either way', () => {
    const exposed = { SANDBOX_ADMIN_TOKEN: 'a-token-of-our-own' };
    expect(loadConfig({}).allowPrivateNotificationUrls).toBe(true);
    expect(loadConfig({ HOST: '::1' }).allowPrivateNotificationUrls).toBe(true);
    expect(loadConfig({ ...exposed, HOST: '0.0.0.0' }).allowPrivateNotificationUrls).toBe(false);
    expect(loadConfig({ ...exposed, HOST: '192.168.1.20' }).allowPrivateNotificationUrls).toBe(false);
    expect(loadConfig({ ...exposed, HOST: '0.0.0.0', SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS: 'true' }).allowPrivateNotificationUrls).toBe(true);
    expect(loadConfig({ SANDBOX_ALLOW_PRIVATE_NOTIFICATION_URLS: 'false' }).allowPrivateNotificationUrls).toBe(false);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['localhost', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['localhost.example.com', false],
  ])('%s is loopback: %s', (host, loopback) => {
    expect(isLoopback(host)).toBe(loopback);
  });
});

describe('which proxies name the caller (TRUST_PROXY)', () => {
  it('trusts none by default, else a number of hops or the addresses, ranges and names given', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8 ,fd00:1::/48,192.0.2.7' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', 'fd00:1::/48', '192.0.2.7']);
  });

  it('refuses to trust every X-Forwarded-For, and what is neither hops nor addresses', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/would believe any X-Forwarded-For/);
    expect(() => loadConfig({ TRUST_PROXY: '11' })).toThrow('TRUST_PROXY must be at most 10 hops, not 11');
    for (const value of ['proxy.internal', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', 'loopback,everyone', 'fe80::1%eth0', `fe80::1%${'z'.repeat(100)}/64`]) {
      expect(() => loadConfig({ TRUST_PROXY: value }), value).toThrow(/TRUST_PROXY must be a number of hops or a list/);
    }
    // Ranges that hold much of the Internet, or IPv4 written as IPv6, trust nearly anyone, as `true` would.
    // However the IPv6 is spelt (Express would trust every IPv4 caller for the first three), and an
    // IPv6 range that holds the IPv4-mapped ones.
    for (const value of [
      '0.0.0.0/0', '0.0.0.0/1,128.0.0.0/1', '::/0', '2001:db8::/16', '::ffff:0:0/96', '::ffff:10.0.0.1',
      '0:0:0:0:0:ffff:0:0/96', '0::ffff:0:0/96', '::0:ffff:0:0/96', '0::ffff:a00:0/104', '::FFFF:A00:1', '::/80',
    ]) {
      expect(() => loadConfig({ TRUST_PROXY: value }), value).toThrow(/is too wide or IPv4-mapped/);
    }
    expect(() => loadConfig({ TRUST_PROXY: ' , ,' })).toThrow('TRUST_PROXY names no proxy');
    // Narrow ranges that together cover as much as wide ones, or a list too long to be one's proxies.
    const everySlash8 = Array.from({ length: 256 }, (_, i) => `${i}.0.0.0/8`).join(',');
    for (const value of [everySlash8, '10.0.0.0/8,11.0.0.0/8,12.0.0.0/8', Array.from({ length: 65 }, (_, i) => `192.0.2.${i}`).join(',')]) {
      expect(() => loadConfig({ TRUST_PROXY: value }), value.slice(0, 40)).toThrow(/TRUST_PROXY names too many proxies/);
    }
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16' }).trustProxy).toHaveLength(3); // the private ranges
  });
});

describe('where the sandbox keeps its data', () => {
  it('takes memory://, or a directory resolved from the current one', () => {
    expect(loadConfig({ DATA_DIR: 'memory://' }).dataDir).toBe('memory://');
    expect(loadConfig({ DATA_DIR: 'data/pglite' }).dataDir).toBe(join(process.cwd(), 'data/pglite'));
    expect(loadConfig({}).dataDir).toBe(join(process.cwd(), '.data/pglite'));
  });

  it.each(['file:///tmp/x', 'MEMORY://', 'idb://x', 'https://example.com/data'])('refuses DATA_DIR=%s, a URL PGlite would read its own way, saying what it takes', (value) => {
    expect(() => loadConfig({ DATA_DIR: value })).toThrow(
      `DATA_DIR (--data-dir) must be a directory, or memory:// to keep nothing on disk; got ${JSON.stringify(value)}`,
    );
  });
});

describe('slow-client timeouts', () => {
  it('keep the headers within the request: an unset HEADERS_TIMEOUT_MS follows a shorter REQUEST_TIMEOUT_MS, a longer one given is refused', () => {
    expect(loadConfig({})).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '4000' })).toMatchObject({ headersTimeoutMs: 4_000, requestTimeoutMs: 4_000 });
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '4000', HEADERS_TIMEOUT_MS: '2000' })).toMatchObject({ headersTimeoutMs: 2_000, requestTimeoutMs: 4_000 });
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '4000', HEADERS_TIMEOUT_MS: '5000' })).toThrow(
      'HEADERS_TIMEOUT_MS (5000) must not be longer than REQUEST_TIMEOUT_MS (4000): the headers are part of the request',
    );
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '40000' })).toThrow('HEADERS_TIMEOUT_MS (40000) must not be longer than REQUEST_TIMEOUT_MS (30000)');
  });
});

describe('whole-number variables (PORT, the limits, the intervals)', () => {
  it('take the default when empty or blank, as every other variable: an empty limit does not turn it off', () => {
    for (const value of [undefined, '', '  ']) {
      const config = loadConfig({ PORT: value, RATE_LIMIT_PER_SECOND: value, TOKEN_FAILED_ATTEMPTS_PER_MINUTE: value, NOTIFICATION_POLL_INTERVAL_MS: value });
      expect([config.port, config.rateLimit.limit, config.tokenFailedAttempts.limit, config.notificationPollIntervalMs]).toEqual([8080, 200, 10, 500]);
    }
    // 0 is said, not implied: it turns a limit off, and picks a free port.
    const zero = loadConfig({ PORT: '0', RATE_LIMIT_PER_SECOND: '0', TOKEN_FAILED_ATTEMPTS_PER_MINUTE: ' 0 ' });
    expect([zero.port, zero.rateLimit.limit, zero.tokenFailedAttempts.limit]).toEqual([0, 0, 0]);
    expect(loadConfig({ PORT: '08080', RATE_LIMIT_PER_SECOND: ' 50 ' })).toMatchObject({ port: 8080, rateLimit: { limit: 50 } });
  });

  it('refuse any other spelling of a number by name, as NOTIFICATION_RETENTION_DAYS does, quoting at most 32 characters', () => {
    for (const value of ['1e3', '0x10', '7.0', '-1', '+5', 'ten', '5 5']) {
      expect(() => loadConfig({ RATE_LIMIT_PER_SECOND: value })).toThrow(`RATE_LIMIT_PER_SECOND must be a whole number >= 0, not ${JSON.stringify(value)}`);
      expect(() => loadConfig({ NOTIFICATION_RETRY_BASE_MS: value })).toThrow(`NOTIFICATION_RETRY_BASE_MS must be a positive whole number of milliseconds, not ${JSON.stringify(value)}`);
      expect(() => loadConfig({ PORT: value })).toThrow(`PORT must be a port number from 0 to 65535 (0 picks a free one), not ${JSON.stringify(value)}`);
    }
    expect(() => loadConfig({ PORT: '65536' })).toThrow('PORT must be a port number from 0 to 65535 (0 picks a free one), not "65536"');
    expect(() => loadConfig({ BILLING_POLL_INTERVAL_MS: '0' })).toThrow('BILLING_POLL_INTERVAL_MS must be a positive whole number of milliseconds, not "0"');
    // A URL or a secret given to the wrong variable is not printed.
    expect(() => loadConfig({ PORT: 'postgres://shop:s3cret@db/shop' })).toThrow('PORT must be a port number from 0 to 65535 (0 picks a free one), not a value of 30 characters');
    expect(() => loadConfig({ RATE_LIMIT_PER_SECOND: 'a-long-secret-token-value' })).toThrow('RATE_LIMIT_PER_SECOND must be a whole number >= 0, not a value of 25 characters');
  });
});

describe('notification retention (NOTIFICATION_RETENTION_DAYS)', () => {
  it('keeps every delivery when unset, empty or 0, and takes whole days from 1 to ten years', () => {
    for (const value of [undefined, '', '0', ' 0 ', '00']) expect(loadConfig({ NOTIFICATION_RETENTION_DAYS: value }).notificationRetentionDays).toBeUndefined();
    expect(loadConfig({ NOTIFICATION_RETENTION_DAYS: '30' }).notificationRetentionDays).toBe(30);
    expect(loadConfig({ NOTIFICATION_RETENTION_DAYS: '1' }).notificationRetentionDays).toBe(1);
    expect(loadConfig({ NOTIFICATION_RETENTION_DAYS: '3650' }).notificationRetentionDays).toBe(3650);
  });

  it('refuses anything else by name, never reading it as another number of days', () => {
    for (const value of ['3651', '-1', '1.5', '30d', '1e2', '0x10', 'thirty', '007a']) {
      expect(() => loadConfig({ NOTIFICATION_RETENTION_DAYS: value })).toThrow(
        `NOTIFICATION_RETENTION_DAYS must be a whole number of days from 1 to 3650 (0 or unset keeps every delivery), not ${JSON.stringify(value)}`,
      );
    }
  });
});

describe('changing the encryption key (SANDBOX_PREVIOUS_ENCRYPTION_KEY)', () => {
  it('takes a key or the DATABASE_URL it was derived from, and refuses anything else at start without quoting it', () => {
    expect(loadConfig({}).previousEncryptionKey).toBeUndefined();
    expect(loadConfig({ SANDBOX_PREVIOUS_ENCRYPTION_KEY: 'a1'.repeat(32) }).previousEncryptionKey).toBe('a1'.repeat(32));
    expect(loadConfig({ SANDBOX_PREVIOUS_ENCRYPTION_KEY: 'postgres://u:pw@db/x' }).previousEncryptionKey).toBe('postgres://u:pw@db/x');
    expect(() => loadConfig({ SANDBOX_PREVIOUS_ENCRYPTION_KEY: 'hunter2-old-secret' })).toThrow(/^SANDBOX_PREVIOUS_ENCRYPTION_KEY must be the key the secrets were sealed with/);
    expect(() => loadConfig({ SANDBOX_PREVIOUS_ENCRYPTION_KEY: 'hunter2-old-secret' })).not.toThrow(/hunter2/);
  });
});

describe('a previous key of its own while the current one would come from DATABASE_URL', () => {
  it('is refused, since anyone who knows the URL could then open the secrets; a URL as the previous key is not', () => {
    const env = { DATABASE_URL: 'postgres://u:pw@db/x', SANDBOX_PREVIOUS_ENCRYPTION_KEY: 'a1'.repeat(32) };
    for (const current of [undefined, '']) {
      expect(() => loadConfig({ ...env, SANDBOX_ENCRYPTION_KEY: current })).toThrow(/^SANDBOX_PREVIOUS_ENCRYPTION_KEY is a key of its own, but SANDBOX_ENCRYPTION_KEY is not set/);
    }
    expect(loadConfig({ ...env, SANDBOX_ENCRYPTION_KEY: 'b2'.repeat(32) }).previousEncryptionKey).toBe('a1'.repeat(32));
    expect(loadConfig({ DATABASE_URL: 'postgres://u:new@db/x', SANDBOX_PREVIOUS_ENCRYPTION_KEY: 'postgres://u:pw@db/x' }).previousEncryptionKey).toBe('postgres://u:pw@db/x');
    expect(loadConfig({ DATA_DIR: 'memory://', SANDBOX_PREVIOUS_ENCRYPTION_KEY: 'a1'.repeat(32) }).previousEncryptionKey).toBe('a1'.repeat(32));
  });
});
