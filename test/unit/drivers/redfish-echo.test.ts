/**
 * @module A BMC that echoes the credentials it was sent in its error never gets them shown (found
 * by test/integration/secret-scan.test.ts: a login refused with ExtendedInfo quoting the POST
 * body put the password into status.errorMessage, the events and the controller's summaries).
 * The Redfish client quotes what the BMC said without the password or the Basic header's value,
 * for session logins and basic authentication alike.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { RedfishClient } from '../../../drivers/redfish/client.js';
import { withoutSecrets } from '../../../drivers/redfish/http-errors.js';

const USER = 'operator';
const PASSWORD = 'canary-pw-63d0a1';
const BASIC = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');

test('withoutSecrets replaces each secret; none given, nothing changes', () => {
  assert.equal(withoutSecrets(`x ${PASSWORD} y ${PASSWORD}`, [PASSWORD]), 'x [redacted] y [redacted]');
  assert.equal(withoutSecrets('x', undefined), 'x');
});

for (const auth of ['session', 'basic'] as const) {
  test(`${auth} authentication: the refusal quotes the BMC without the credentials it echoed`, async () => {
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const send = (status: number, value: unknown): void => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value)); };
        if (req.url === '/redfish/v1') {
          send(200, { '@odata.id': '/redfish/v1', RedfishVersion: '1.11.0', Systems: { '@odata.id': '/redfish/v1/Systems' }, Links: { Sessions: { '@odata.id': '/redfish/v1/SessionService/Sessions' } } });
          return;
        }
        const said = `no access for ${body} with ${req.headers.authorization ?? ''}`;
        send(401, { error: { code: 'Base.1.8.GeneralError', message: said, '@Message.ExtendedInfo': [{ MessageId: 'Base.1.8.NoValidSession', Message: said }] } });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = new RedfishClient({ endpoint: `http://127.0.0.1:${port}`, address: `redfish+http://127.0.0.1:${port}/redfish/v1/Systems/1`, credentials: { username: USER, password: PASSWORD }, auth, retries: 0 });
    try {
      await assert.rejects(client.get('/redfish/v1/Systems/1'), (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, /rejected the credentials \(HTTP 401: .*no access for/);
        assert.ok(!err.message.includes(PASSWORD) && !err.message.includes(BASIC), err.message);
        return true;
      });
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
}
