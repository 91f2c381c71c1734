/**
 * The DHCPv6 server as the agent starts it (agent/boot/boot-services6.ts): a real agent process
 * with `provisioner: local`, `dhcp6.mode: full` and a dual-stack `provisioning.address` runs in a
 * namespace; a BareMetalHost is applied through the CLI (from inside that namespace, where the
 * management listener is); `dhclient -6` with the host's MAC gets an address of the range, and
 * the host's boot timeline (the flight recorder) shows the exchange; the agent's store holds the
 * lease under `dhcp6/<mac>` once the agent has stopped. With `routerAdvertisements: on` the
 * agent advertises the prefix: `rdisc6` on the host's link sees the Managed flag and the prefix.
 * With `http.listen` and `tftp.listen` left out, boot HTTP and TFTP listen on `::`: the host's
 * iPXE script comes over IPv6 from its DHCPv6 address and over IPv4 alike.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLease6Store } from '../../agent/boot/lease-store6.js';
import { openStore } from '../../agent/store/index.js';
import { CLI, removeDir, scratchDir, startAgentProcess } from '../helpers/agent-process.js';
import { NetnsLab, waitFor } from '../helpers/netns.js';
import { dhclient6, enableIpv6 } from './dhcp6-peers.js';

const MAC = '52:54:00:63:00:01';
const MANIFEST = `apiVersion: v1
kind: Secret
metadata: { name: node-6-bmc, namespace: metal3 }
type: Opaque
data: { username: YWRtaW4=, password: cGFzc3dvcmQ= }
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata: { name: node-6, namespace: metal3 }
spec:
  online: false
  bootMACAddress: ${MAC}
  bmc: { address: 'redfish://[fd00:63::99]:8000/redfish/v1/Systems/1', credentialsName: node-6-bmc }
`;

test('the agent started with dhcp6 full leases an IPv6 address to a known host, stored under dhcp6/<mac>', async (t) => {
  const lab = await NetnsLab.create(t, { tools: ['dhclient', 'rdisc6'] });
  if (lab === undefined) return;
  const dir = await scratchDir('dhcp6-agent');
  t.after(() => removeDir(dir));
  const prov = await lab.bridge('prov63');
  const srv = await lab.namespace('agent63');
  const client = await lab.namespace('host63');
  await enableIpv6(lab, srv, []);
  await enableIpv6(lab, client, []);
  await lab.attach(srv, prov, { mac: '02:00:00:63:00:fe' });
  await lab.attach(client, prov, { mac: MAC });
  await enableIpv6(lab, srv, ['eth0']);
  await enableIpv6(lab, client, ['eth0']);
  await lab.exec(srv, 'ip', ['addr', 'add', 'fd00:63::1/64', 'dev', 'eth0', 'nodad']);
  await lab.exec(srv, 'ip', ['addr', 'add', '192.0.2.1/24', 'dev', 'eth0']);
  await lab.exec(client, 'ip', ['addr', 'add', '192.0.2.50/24', 'dev', 'eth0']);
  const agent = await startAgentProcess(dir, [
    'provisioner: local',
    'provisioning:', '  interface: eth0', '  address: [192.0.2.1/24, fd00:63::1/64]',
    'dhcp6:', '  mode: full', '  range: fd00:63::100-fd00:63::1ff', '  routerAdvertisements: on',
  ].join('\n'), 30_000, ['ip', 'netns', 'exec', srv]);
  t.after(() => agent.kill());
  const rdisc = await lab.exec(client, 'rdisc6', ['-1', '-w', '3000', '-m', 'eth0'], { timeoutMs: 20_000 });
  assert.match(rdisc.stdout, /Stateful address conf\.\s*:\s*Yes/, rdisc.stdout);
  assert.match(rdisc.stdout, /Prefix\s*:\s*fd00:63::\/64/);
  assert.match(rdisc.stdout, /Router lifetime\s*:\s*0 /);
  const manifest = join(dir, 'node-6.yaml');
  await writeFile(manifest, MANIFEST);
  const applied = await lab.exec(srv, process.execPath, [CLI, 'apply', '-f', manifest], { env: { ...process.env, RACKSIDE_SERVER: agent.url }, allowFailure: true });
  assert.equal(applied.code, 0, `apply failed: ${applied.stdout}${applied.stderr}`);
  assert.match(agent.output(), /dhcp6 full server on eth0 \(fd00:63::1\)/);
  const lease = await dhclient6(lab, client, dir, 'LL');
  assert.match(lease.new_ip6_address ?? '', /^fd00:63::1[0-9a-f]{2}$/);
  // The flight recorder stored the exchange in the host's boot timeline (batched: read until it is there).
  const timeline = await waitFor(async () => {
    const got = await lab.exec(srv, 'curl', ['-sS', `${agent.url}/api/v1/boot/${MAC}/timeline`], { allowFailure: true });
    return got.stdout.includes('dhcpv6 request') && got.stdout.includes(lease.new_ip6_address ?? '-') ? got.stdout : undefined;
  }, 'the DHCPv6 exchange in the boot timeline');
  assert.match(timeline, /dhcpv6 solicit/);
  // Boot HTTP on its default, [::]:8081: the host's script over IPv6 (from its DHCPv6 address) and over IPv4.
  const script = `/boot/${MAC.replace(/:/g, '-')}.ipxe`;
  await lab.exec(client, 'ip', ['addr', 'add', `${lease.new_ip6_address ?? ''}/64`, 'dev', 'eth0', 'nodad']); // as the host would (dhclient's hook here only records)
  for (const base of ['http://[fd00:63::1]:8081', 'http://192.0.2.1:8081']) {
    const got = await lab.exec(client, 'curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{local_ip}', `${base}${script}`], { allowFailure: true });
    assert.match(got.stdout, base.includes('[') ? new RegExp(`^200 ${(lease.new_ip6_address ?? '-').replace(/\./g, '\\.')}$`) : /^200 192\.0\.2\.50$/, `${base}: ${got.stdout}${got.stderr}`);
  }
  // The status document (the status page's boot panel) shows the DHCPv6 lease beside DHCPv4.
  const status = await lab.exec(srv, 'curl', ['-sS', `${agent.url}/api/v1/status`]);
  const dhcp6 = (JSON.parse(status.stdout) as { bootServices?: { dhcp6?: { mode: string; leasesUsed?: number; leasesFree?: number; message?: string } } }).bootServices?.dhcp6;
  assert.deepEqual([dhcp6?.mode, dhcp6?.leasesUsed, dhcp6?.leasesFree], ['full', 1, 255], status.stdout);
  assert.match(dhcp6?.message ?? '', /^on eth0 \(fd00:63::1\) · [1-9]\d* router advertisements sent$/);
  assert.equal(await agent.stop(), 0);
  const store = await openStore({ stateDir: join(dir, 'state') });
  try {
    const leases = await createLease6Store(store.leases).list();
    assert.deepEqual(leases.map((l) => [l.mac, l.address, l.state]), [[MAC, lease.new_ip6_address, 'bound']]);
  } finally {
    await store.close();
  }
});
