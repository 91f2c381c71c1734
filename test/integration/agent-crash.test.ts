/**
 * kill -9 during 200 concurrent applies (each a BareMetalHost and its Secret) loses no
 * acknowledged apply and leaves no half-written host, with a real agent process.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { removeDir, scratchDir, startAgentProcess } from '../helpers/agent-process.js';

function manifests(i: number): string {
  const name = `node-${i}`;
  return JSON.stringify({
    items: [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-bmc`, namespace: 'rack' }, data: { username: 'YWRtaW4=', password: 'cGFzc3dvcmQ=' } },
      {
        apiVersion: 'metal3.io/v1alpha1',
        kind: 'BareMetalHost',
        metadata: { name, namespace: 'rack' },
        spec: { online: true, bmc: { address: `ipmi://10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`, credentialsName: `${name}-bmc` } },
      },
    ],
  });
}

for (const killAfterAcks of [20, 90]) {
  test(`kill -9 after ${killAfterAcks} of 200 concurrent applies loses no acknowledged write`, async (t) => {
    const dir = await scratchDir('crash');
    t.after(() => removeDir(dir));
    let agent = await startAgentProcess(dir);
    t.after(() => agent.kill());
    const acked = new Set<number>();
    let killed: Promise<void> | undefined;
    const requests = Array.from({ length: 200 }, async (_, i) => {
      try {
        const res = await fetch(`${agent.url}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: manifests(i) });
        if (res.status === 200) {
          acked.add(i);
          if (acked.size >= killAfterAcks) killed ??= agent.kill();
        }
      } catch {
        // the connection died with the agent: not acknowledged
      }
    });
    await Promise.all(requests);
    await (killed ?? agent.kill());
    assert.ok(acked.size >= killAfterAcks, `only ${acked.size} applies were acknowledged before the kill`);

    agent = await startAgentProcess(dir);
    const hosts = (await (await fetch(`${agent.url}/api/v1/hosts`)).json()) as { items: { metadata: { name: string } }[] };
    const secrets = (await (await fetch(`${agent.url}/api/v1/secrets`)).json()) as { items: { name: string }[] };
    const hostNames = new Set(hosts.items.map((h) => h.metadata.name));
    const secretNames = new Set(secrets.items.map((s) => s.name));
    for (const i of acked) {
      assert.ok(hostNames.has(`node-${i}`), `acknowledged host node-${i} lost`);
      assert.ok(secretNames.has(`node-${i}-bmc`), `acknowledged secret node-${i}-bmc lost`);
    }
    for (const name of hostNames) assert.ok(secretNames.has(`${name}-bmc`), `host ${name} without its secret`);
    for (const name of secretNames) assert.ok(hostNames.has(name.replace(/-bmc$/, '')), `secret ${name} without its host`);
    assert.equal(await agent.stop(), 0);
  });
}
