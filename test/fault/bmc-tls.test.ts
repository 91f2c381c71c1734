/**
 * Fault injection: a BMC whose TLS certificate changes, through the real host state machine, the
 * local provisioner and the real Redfish driver against the virtual Redfish BMC over HTTPS. The
 * driver trusts one CA (the `ca` bundle, as an operator's `NODE_EXTRA_CA_CERTS` or pinned CA
 * would); the BMC swaps its certificate for one from another CA (dropping its connections, as a
 * BMC restarting its web server does). With verification on, the host holds its state and a
 * `TransientFailure` Warning names the TLS verification failure and the OpenSSL code (not a generic
 * "cannot reach"); once the BMC serves a certificate from the trusted CA again (the old one or a
 * new one), the host recovers by itself. With verification disabled, a changed certificate
 * changes nothing.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { requireTools } from '../helpers/integration.js';
import type { MemoryHostBackend } from '../lab/redfish/backend.js';
import { labCertificateAuthority, type LabCertificate, type LabCertificateAuthority } from '../lab/redfish/tls.js';
import { availableHost } from './bmc-rig.js';

interface Certificates {
  trusted: LabCertificateAuthority;
  original: LabCertificate;
  foreign: LabCertificate;
}

let made: Promise<Certificates> | undefined;

/** The trusted CA, the BMC's first certificate (from it) and one from a stranger CA; undefined when skipped. */
async function certificates(t: TestContext): Promise<Certificates | undefined> {
  if (!requireTools(t, ['openssl'])) return undefined;
  made ??= (async () => {
    const [trusted, stranger] = await Promise.all([labCertificateAuthority('rackside trusted CA'), labCertificateAuthority('someone else CA')]);
    const [original, foreign] = await Promise.all([trusted.issue(), stranger.issue()]);
    return { trusted, original, foreign };
  })();
  return made;
}

const restores: Record<string, (c: Certificates) => Promise<LabCertificate>> = {
  'the old certificate comes back': (c) => Promise.resolve(c.original),
  'a new certificate from the trusted CA is installed': (c) => c.trusted.issue('rackside virtual BMC, renewed'),
};

for (const [name, restore] of Object.entries(restores)) {
  test(`verification on, certificate replaced by another CA's: the host holds its state with a Warning naming the TLS failure; recovers when ${name}`, async (t) => {
    const c = await certificates(t);
    if (c === undefined) return;
    const r = await availableHost(t, { https: true, certificate: c.original, ca: c.trusted.cert });
    assert.equal((await r.host()).spec.bmc?.disableCertificateVerification ?? false, false, 'verification is on');
    r.bmc.setCertificate(c.foreign);
    await r.setOnline(true);
    for (let i = 0; i < 8; i++) await r.reconciler.reconcileOnce('f0');
    const during = await r.host();
    assert.equal(during.status.provisioning.state, 'available', 'the host stays where it was');
    assert.equal(during.status.poweredOn, false);
    assert.equal((r.bmc.backends.get('1') as MemoryHostBackend).power, 'Off', 'nothing reached the BMC past the handshake');
    const events = await r.events();
    const warning = events.find((e) => e.startsWith('TransientFailure: '));
    assert.ok(warning !== undefined, `a Warning event tells the operator: ${events.join(' | ')}`);
    assert.match(warning, /TLS certificate of 127\.0\.0\.1:\d+ was not accepted/);
    assert.match(warning, /\(UNABLE_TO_VERIFY_LEAF_SIGNATURE\): it is not signed by a CA this agent trusts \(was the BMC's certificate replaced\?\)/, 'names the OpenSSL code and what it means');
    assert.match(warning, /NODE_EXTRA_CA_CERTS.*disableCertificateVerification/, 'and both fixes');
    assert.doesNotMatch(warning, /cannot reach/);
    assert.match(warning, /attempts in a row/);
    t.diagnostic(warning);
    r.bmc.setCertificate(await restore(c));
    const healed = await r.until('recovering', (h) => h.status.poweredOn && h.status.errorMessage === '' && h.status.operationalStatus === 'OK');
    assert.equal(healed.status.provisioning.state, 'available');
    assert.equal((r.bmc.backends.get('1') as MemoryHostBackend).power, 'On');
    assert.ok((await r.events()).some((e) => e.startsWith('Recovered: ')), 'recovery is recorded too');
  });
}

test('verification disabled: a BMC serving a certificate from another CA changes nothing', async (t) => {
  const c = await certificates(t);
  if (c === undefined) return;
  const r = await availableHost(t, { https: true, certificate: c.original, disableCertificateVerification: true });
  r.bmc.setCertificate(c.foreign);
  await r.setOnline(true);
  const on = await r.until('powering on', (h) => h.status.poweredOn, 10);
  assert.equal(on.status.errorMessage, '');
  assert.equal(on.status.operationalStatus, 'OK');
  const events = await r.events();
  assert.ok(!events.some((e) => e.startsWith('TransientFailure: ') || /TLS/.test(e)), `no warning: ${events.join(' | ')}`);
});
