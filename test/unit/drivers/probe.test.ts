/**
 * The BMC capability probe (drivers/probe.ts) against the repo's own peers on 127.0.0.1: the
 * virtual Redfish BMC over HTTPS with its self-signed certificate (with and without --insecure)
 * and over HTTP, the in-process fake lanplus BMC, a closed port and a silent UDP listener. Each
 * gets the right recommendation, or a clear "nothing answered" within the 10 s budget.
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { probeBmc } from '../../../drivers/probe.js';
import { recommend } from '../../../drivers/probe-decode.js';
import { FakeLanplusBmc } from '../../lab/ipmi/fake-lanplus-bmc.js';
import { startVirtualRedfishBmc } from '../../lab/redfish/virtual-bmc.js';

/** A TCP port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('virtual Redfish BMC over HTTPS with --insecure: vendor, model, firmware and a virtual-media address', async () => {
  const bmc = await startVirtualRedfishBmc({ password: 'pw' });
  try {
    const report = await probeBmc({ address: `redfish+https://${bmc.host}`, username: 'admin', password: 'pw', insecure: true, timeoutMs: 5000, requestTimeoutMs: 300 });
    assert.equal(report.recommendedAddress, `redfish-virtualmedia+https://${bmc.host}/redfish/v1/Systems/1`);
    assert.equal(report.vendor, 'rackside');
    assert.equal(report.model, 'Virtual Server');
    assert.ok(report.firmware !== undefined && report.firmware !== '');
    const feature = (name: string): boolean | undefined => report.features.find((f) => f.name === name)?.supported;
    assert.equal(feature('redfish.virtualMedia'), true);
    assert.equal(feature('redfish.uefiHttp'), true);
    assert.equal(feature('redfish.UpdateService'), true);
    assert.ok(report.attempts.some((a) => a.protocol === 'redfish' && a.ok && a.request.endsWith('/redfish/v1/')));
    assert.ok(report.attempts.some((a) => a.protocol === 'ipmi' && !a.ok), 'the IPMI attempt is reported too');
    assert.ok(report.notes.some((n) => /not trusted/.test(n)), 'the untrusted certificate is named');
    assert.equal(report.answered, true);
  } finally {
    await bmc.stop();
  }
});

test('without --insecure: the ServiceRoot is read unverified, no credentials are sent, the certificate is named', async () => {
  const bmc = await startVirtualRedfishBmc({ password: 'pw' });
  try {
    const report = await probeBmc({ address: `redfish+https://${bmc.host}`, username: 'admin', password: 'pw', timeoutMs: 5000, requestTimeoutMs: 300 });
    assert.ok(report.attempts.some((a) => /certificate not trusted/.test(a.answer)), JSON.stringify(report.attempts));
    assert.equal(report.redfish?.untrustedCertificate, true);
    assert.match(report.redfish.authRefused ?? '', /credentials withheld/);
    assert.equal(report.recommendedAddress, `redfish+https://${bmc.host}`);
    assert.ok(report.notes.some((n) => /disableCertificateVerification/.test(n)));
  } finally {
    await bmc.stop();
  }
});

test('Redfish over plain HTTP when HTTPS does not answer', async () => {
  const bmc = await startVirtualRedfishBmc({ https: false, password: 'pw' });
  try {
    const report = await probeBmc({ address: `redfish+https://${bmc.host}/redfish/v1/Systems/1`, username: 'admin', password: 'pw', timeoutMs: 5000, requestTimeoutMs: 300 });
    assert.equal(report.recommendedAddress, `redfish-virtualmedia+http://${bmc.host}/redfish/v1/Systems/1`);
  } finally {
    await bmc.stop();
  }
});

test('the fake lanplus BMC: ipmi:// recommended, cipher suites listed; a bare host keeps its IPMI meaning', async () => {
  const bmc = await FakeLanplusBmc.start({ cipherSuites: [3, 17] });
  const port = await closedPort();
  try {
    // A bare host:port is IPMI for metal3; Redfish on 443/80 is tried too (127.0.0.1 only).
    const report = await probeBmc({ address: `ipmi://127.0.0.1:${bmc.port}`, timeoutMs: 5000, requestTimeoutMs: 300 });
    assert.equal(report.recommendedAddress, `ipmi://127.0.0.1:${bmc.port}`);
    assert.deepEqual([...(report.ipmi?.cipherSuites ?? [])].sort((a, b) => a - b), [3, 17]);
    assert.equal(report.features.find((f) => f.name === 'ipmi.lanplus')?.supported, true);
    assert.equal(report.givenType, 'ipmi');
    assert.ok(port > 0);
  } finally {
    await bmc.stop();
  }
});

test('a closed port and a silent UDP listener: "nothing answered" within the budget', async () => {
  const silent = createSocket('udp4');
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  const udpPort = silent.address().port;
  let received = 0;
  silent.on('message', () => { received += 1; });
  const tcpPort = await closedPort();
  try {
    const started = Date.now();
    const report = await probeBmc({ address: `redfish+https://127.0.0.1:${tcpPort}`, timeoutMs: 10_000, requestTimeoutMs: 500 });
    assert.equal(report.answered, false);
    assert.equal(report.recommendedAddress, undefined);
    assert.ok(report.attempts.some((a) => a.answer === 'connection refused'));
    const ipmiReport = await probeBmc({ address: `ipmi://127.0.0.1:${udpPort}`, timeoutMs: 10_000, requestTimeoutMs: 500 });
    assert.equal(ipmiReport.answered, false);
    assert.match(ipmiReport.notes.join('\n'), /nothing answered/);
    assert.ok(ipmiReport.attempts.some((a) => a.protocol === 'ipmi' && /no answer within 500 ms/.test(a.answer)));
    assert.ok(received >= 1, 'the silent listener got the request');
    assert.ok(Date.now() - started < 10_000, 'both probes within 10 s');
  } finally {
    silent.close();
  }
});

test('recommend: Dell with virtual media gets idrac-virtualmedia; UEFI HTTP without media; IPv6 brackets', () => {
  const base = { untrustedCertificate: false, services: { UpdateService: undefined, SessionService: undefined, EventService: undefined } };
  assert.equal(recommend({ ...base, base: 'https://10.0.0.5', manufacturer: 'Dell Inc.', systemPath: '/redfish/v1/Systems/System.Embedded.1', virtualMedia: { slots: 2, cd: true } }, undefined, '10.0.0.5').address,
    'idrac-virtualmedia+https://10.0.0.5/redfish/v1/Systems/System.Embedded.1');
  assert.equal(recommend({ ...base, base: 'https://10.0.0.5:8443', systemPath: '/redfish/v1/Systems/1', bootTargets: ['Pxe', 'UefiHttp'], virtualMedia: { slots: 0, cd: false } }, undefined, '10.0.0.5').address,
    'redfish-uefihttp+https://10.0.0.5:8443/redfish/v1/Systems/1');
  assert.equal(recommend(undefined, { port: 623, capabilities: { supportsIpmi20: true } as never, cipherSuites: [3] }, 'fd00::5').address, 'ipmi://[fd00::5]');
});
