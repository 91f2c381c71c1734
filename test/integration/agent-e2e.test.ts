/**
 * End to end with a real agent process and the real CLI: apply a metal3 manifest
 * (BareMetalHost + Secret), watch it reach `provisioned` with the fixture provisioner, see it
 * in `get hosts`, delete it, and stop the agent cleanly with SIGTERM.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { removeDir, runCli, scratchDir, startAgentProcess } from '../helpers/agent-process.js';

const MANIFEST = `apiVersion: v1
kind: Secret
metadata:
  name: worker-0-bmc-secret
  namespace: metal3
type: Opaque
data:
  username: YWRtaW4=
  password: c3VwZXItc2VjcmV0LXBhc3N3b3Jk
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: worker-0
  namespace: metal3
spec:
  online: true
  bootMACAddress: 00:5c:52:31:3a:9c
  bootMode: UEFI
  bmc:
    address: redfish-virtualmedia+https://192.168.111.1:8000/redfish/v1/Systems/worker-0
    credentialsName: worker-0-bmc-secret
    disableCertificateVerification: true
  rootDeviceHints:
    deviceName: /dev/sda
  image:
    url: http://172.22.0.1/images/CENTOS_9_NODE_IMAGE_K8S_v1.31.0.qcow2
    checksum: http://172.22.0.1/images/CENTOS_9_NODE_IMAGE_K8S_v1.31.0.qcow2.sha256sum
    checksumType: sha256
    format: qcow2
`;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('apply → provisioned → get → delete through the CLI against a real agent', async (t) => {
  const dir = await scratchDir('e2e');
  t.after(() => removeDir(dir));
  const agent = await startAgentProcess(dir);
  t.after(() => agent.kill());
  const manifest = join(dir, 'worker-0.yaml');
  await writeFile(manifest, MANIFEST);

  const applied = await runCli(agent.url, ['apply', '-f', manifest]);
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /secret\/worker-0-bmc-secret created/);
  assert.match(applied.stdout, /baremetalhost\.metal3\.io\/worker-0 created/);

  const again = await runCli(agent.url, ['apply', '-f', '-'], MANIFEST);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /worker-0 unchanged/);

  const host = await waitFor('worker-0 provisioned', async () => {
    const got = await runCli(agent.url, ['get', 'host', 'worker-0', '-o', 'json']);
    assert.equal(got.code, 0, got.stderr);
    const parsed = JSON.parse(got.stdout) as { status: { provisioning: { state: string; image: { url: string } }; poweredOn: boolean } };
    return parsed.status.provisioning.state === 'provisioned' && parsed.status.poweredOn ? parsed : undefined;
  });
  assert.match(host.status.provisioning.image.url, /CENTOS_9/);

  const table = await runCli(agent.url, ['get', 'hosts']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^NAME\s+STATE/m);
  assert.match(table.stdout, /^worker-0\s+provisioned\s/m);

  const described = await runCli(agent.url, ['describe', 'host', 'worker-0']);
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /provisioned/);
  assert.doesNotMatch(described.stdout + table.stdout, /super-secret-password/);

  const sync = await runCli(agent.url, ['sync', 'status']);
  assert.equal(sync.code, 0, sync.stderr);
  assert.match(sync.stdout, /not configured/);

  const deleted = await runCli(agent.url, ['delete', 'host', 'worker-0']);
  assert.equal(deleted.code, 0, deleted.stderr);
  const gone = await runCli(agent.url, ['get', 'host', 'worker-0']);
  assert.equal(gone.code, 3, 'not found exit code');

  assert.equal(await agent.stop(), 0, agent.output());
});

test('a config error exits with code 2 and names the key', async (t) => {
  const dir = await scratchDir('e2e-config');
  t.after(() => removeDir(dir));
  const configPath = join(dir, 'bad.yaml');
  await writeFile(configPath, 'dhcp:\n  mode: sometimes\nmanagement:\n  listne: 127.0.0.1:1\n');
  const result = await runCli('http://127.0.0.1:9', ['agent', '--config', configPath]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /dhcp\.mode/);
  assert.match(result.stderr, /management\.listne/);
});
