// The server on the joined platform bundle (what `make run` enforces): the validator loads it, and
// the token endpoints and the key set answer within it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, DEMO, startTestServer, tokenForm, type TestServer } from './support/server.ts';

const PLATFORM_BUNDLE = new URL('../../generated/platform.openapi.yaml', import.meta.url).pathname;

describe('on generated/platform.openapi.yaml', () => {
  let sandbox: TestServer;
  beforeAll(async () => {
    sandbox = await startTestServer({ config: { apiSpec: PLATFORM_BUNDLE } });
  });
  afterAll(() => sandbox?.close());

  it('issues tokens in both forms', async () => {
    const first = await sandbox.http.post('/authentication/oauth2/-core/access_token').type('form').send(tokenForm());
    expect(first.status).toBe(200);
    const second = await sandbox.http
      .post('/authentication/oauth2/access_token')
      .set('Authorization', basic(DEMO.clientId, DEMO.clientSecret))
      .type('form')
      .send({ grant_type: 'client_credentials' });
    expect(second.status).toBe(200);
  });

  it('serves the key set as the sandbox area documents it', async () => {
    const res = await sandbox.http.get('/sandbox/v1/jwks');
    expect(res.status).toBe(200);
    expect(res.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  });
});
