/**
 * Client-certificate rack authentication on a real PostgreSQL 15 (docs/controller.md, "Rack
 * credentials"): an HTTPS controller with `tls.clientCA`, certificates made by openssl. A rack
 * added with auth `cert` pushes with a verified certificate whose subject CN is its name; a
 * certificate pushing for another rack, one from an untrusted CA, one naming a token rack, one
 * with no CN or two, or none at all, is 401 and writes nothing; revocation refuses a certificate that still verifies;
 * token racks keep working on the same listener.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addCertRack, addRack, revokeRack, rotateRack, rotateRackToCert } from '../../../controller/racks.js';
import { controllerFor, hostSummary, push, tableCounts } from './fleet-fixtures.js';
import { httpsRequest, postPushTls, rackPkiFor } from './rack-pki.js';

test('a certificate rack pushes by its client certificate; another rack\'s name, an untrusted CA, a token rack\'s name, no single CN or no credential is 401 and writes nothing', { timeout: 120_000 }, async (t) => {
  const pki = await rackPkiFor(t);
  if (pki === undefined) return;
  const c = await controllerFor(t, { tls: { ...pki.server, clientCA: pki.ca } });
  if (c === undefined) return;
  await addCertRack(c.pool, 'rack1');
  await addCertRack(c.pool, 'rack2');
  const token3 = await addRack(c.pool, 'rack3');
  const [rack1, rack3, rogue1] = [await pki.rack('rack1'), await pki.rack('rack3'), await pki.rogue('rack1')];
  assert.match(c.controller.url, /^https:/);
  const ok = await postPushTls(c.controller.url, { ca: pki.ca, client: rack1 }, push('rack1', 1, { hosts: [hostSummary('n1', 10)] }));
  assert.deepEqual(ok, { status: 200, body: { acknowledged: 1, commands: [] } });
  const before = await tableCounts(c.pool);
  assert.equal(before.hosts, 1);
  const refused: [string, Awaited<ReturnType<typeof postPushTls>>, RegExp][] = [
    ['rack1\'s certificate pushing as rack2', await postPushTls(c.controller.url, { ca: pki.ca, client: rack1 }, push('rack2', 1, { hosts: [hostSummary('x', 1)] })), /belongs to rack rack1, not rack2/],
    ['a "rack1" certificate from an untrusted CA', await postPushTls(c.controller.url, { ca: pki.ca, client: rogue1 }, push('rack1', 2, { hosts: [hostSummary('x', 1)] })), /not verified/],
    ['a certificate naming token rack rack3', await postPushTls(c.controller.url, { ca: pki.ca, client: rack3 }, push('rack3', 1, { hosts: [hostSummary('x', 1)] })), /authenticates by token/],
    ['a verified certificate without a CN', await postPushTls(c.controller.url, { ca: pki.ca, client: await pki.withSubject('no-cn', '/O=rack1') }, push('rack1', 2, { hosts: [hostSummary('x', 1)] })), /no single subject CN/],
    ['a verified certificate with two CNs', await postPushTls(c.controller.url, { ca: pki.ca, client: await pki.withSubject('two-cn', '/CN=rack1/CN=rack2') }, push('rack1', 2, { hosts: [hostSummary('x', 1)] })), /no single subject CN/],
    ['no certificate and no token', await postPushTls(c.controller.url, { ca: pki.ca }, push('rack1', 2, { hosts: [hostSummary('x', 1)] })), /missing "Authorization: Bearer/],
    ['rack3\'s token with rack1\'s certificate, pushing as rack1', await postPushTls(c.controller.url, { ca: pki.ca, client: rack1, token: token3 }, push('rack1', 2, { hosts: [hostSummary('x', 1)] })), /belongs to rack rack3, not rack1/],
  ];
  for (const [what, answer, message] of refused) {
    assert.equal(answer.status, 401, `${what}: ${JSON.stringify(answer.body)}`);
    assert.match((answer.body.error as { message: string }).message, message, what);
  }
  assert.deepEqual(await tableCounts(c.pool), before, 'nothing written by any refused push');
  const byToken = await postPushTls(c.controller.url, { ca: pki.ca, token: token3 }, push('rack3', 1, { hosts: [hostSummary('n3', 1)] }));
  assert.deepEqual(byToken, { status: 200, body: { acknowledged: 1, commands: [] } }, 'a token rack needs no certificate on a clientCA listener');
  const metrics = await httpsRequest(`${c.controller.url}/metrics`, { ca: pki.ca });
  assert.match(metrics.text, /^rackside_controller_pushes_total\{result="unauthorized"\} 7$/m);
});

test('a revoked certificate rack is refused although its certificate verifies; rotate --auth cert lets it in again, rotate to a token shuts the certificate out', { timeout: 120_000 }, async (t) => {
  const pki = await rackPkiFor(t);
  if (pki === undefined) return;
  const c = await controllerFor(t, { tls: { ...pki.server, clientCA: pki.ca } });
  if (c === undefined) return;
  await addCertRack(c.pool, 'rack1');
  const tls = { ca: pki.ca, client: await pki.rack('rack1') };
  assert.equal((await postPushTls(c.controller.url, tls, push('rack1', 1, { hosts: [hostSummary('n1', 1)] }))).status, 200);
  await revokeRack(c.pool, 'rack1');
  const before = await tableCounts(c.pool);
  const revoked = await postPushTls(c.controller.url, tls, push('rack1', 2, { hosts: [hostSummary('n1', 2)] }));
  assert.equal(revoked.status, 401);
  assert.match((revoked.body.error as { message: string }).message, /rack rack1 is revoked/);
  assert.deepEqual(await tableCounts(c.pool), before, 'the revoked rack wrote nothing');
  const racks = JSON.parse((await httpsRequest(`${c.controller.url}/api/v1/racks`, { ca: pki.ca })).text) as { items: { name: string; revoked: boolean }[] };
  assert.deepEqual(racks.items.map((r) => [r.name, r.revoked]), [['rack1', true]]);
  await rotateRackToCert(c.pool, 'rack1');
  assert.equal((await postPushTls(c.controller.url, tls, push('rack1', 2, { hosts: [hostSummary('n1', 2)] }))).status, 200, 'rotated: the certificate works again');
  const token = await rotateRack(c.pool, 'rack1');
  const cert = await postPushTls(c.controller.url, tls, push('rack1', 3, { hosts: [hostSummary('n1', 3)] }));
  assert.equal(cert.status, 401, 'a rack rotated to a token no longer takes its certificate');
  assert.equal((await postPushTls(c.controller.url, { ca: pki.ca, token }, push('rack1', 3, { hosts: [hostSummary('n1', 3)] }))).status, 200);
});

test('without tls.clientCA a client certificate is not asked for: a certificate rack cannot push', { timeout: 120_000 }, async (t) => {
  const pki = await rackPkiFor(t);
  if (pki === undefined) return;
  const c = await controllerFor(t, { tls: pki.server });
  if (c === undefined) return;
  await addCertRack(c.pool, 'rack1');
  const answer = await postPushTls(c.controller.url, { ca: pki.ca, client: await pki.rack('rack1') }, push('rack1', 1, { hosts: [hostSummary('n1', 1)] }));
  assert.equal(answer.status, 401);
  assert.equal((await tableCounts(c.pool)).hosts, 0);
});
