// The published packages' versions and changelogs: semantic versions, the contract package's
// version equal to the bundle's `info.version`, and a changelog per package whose newest section
// is the version in its package.json (the repository's convention, written in each CHANGELOG.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

describe.each(['generated', 'client', 'server'])('the package in %s/', (folder) => {
  const pkg = JSON.parse(read(`${folder}/package.json`));

  it('is publishable: a semantic version, a license, the repository, engines, exports with types, exact files', () => {
    expect(pkg.version).toMatch(SEMVER);
    expect(pkg.private).toBeUndefined();
    expect(pkg.license).toBe('MIT');
    expect(pkg.repository).toMatchObject({ type: 'git', directory: folder });
    expect(pkg.engines.node).toBe('>=20.19.0');
    for (const [subpath, target] of Object.entries<any>(pkg.exports)) {
      if (typeof target === 'object') expect(target.types, subpath).toMatch(/\.d\.ts$/);
    }
    expect(pkg.files.length).toBeGreaterThan(0);
    expect(read(`${folder}/LICENSE`)).toBe(read('LICENSE'));
  });

  it('has a changelog whose newest section is its version', () => {
    const versions = [...read(`${folder}/CHANGELOG.md`).matchAll(/^## (\S+) - \d{4}-\d{2}-\d{2}$/gm)].map((m) => m[1]);
    expect(versions[0]).toBe(pkg.version);
    expect(versions.every((v) => SEMVER.test(v!))).toBe(true);
  });
});

it("the contract package's version is the bundle's info.version", () => {
  const bundle = JSON.parse(read('generated/platform.openapi.json'));
  expect(JSON.parse(read('generated/package.json')).version).toBe(bundle.info.version);
});

it('the client depends on openapi-fetch and the contract only; the sandbox on the contract, not the client', () => {
  const client = JSON.parse(read('client/package.json'));
  const sandbox = JSON.parse(read('server/package.json'));
  expect(Object.keys(client.dependencies).sort()).toEqual(['@payment-platform/contract', 'openapi-fetch']);
  expect(sandbox.dependencies['@payment-platform/contract']).toBe(JSON.parse(read('generated/package.json')).version);
  expect(sandbox.dependencies['@payment-platform/client']).toBeUndefined();
  expect(JSON.parse(read('generated/package.json')).dependencies).toBeUndefined();
});
