/**
 * The agent with the local provisioner, provisioning end to end over HTTP: a host (fake BMC,
 * inspection disabled) with an image on a loopback upstream server is applied through the API;
 * the agent caches the image and serves it from boot HTTP (exact bytes, Range); a simulated
 * ramdisk gets `deploy` with the served URL, sha256, size and config drive, reports ok, and the
 * host is provisioned with a "boot from local disk" iPXE script; removing the image deprovisions
 * it through `clean` back to available.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { EraseRecord } from '../../agent/erase/record.js';
import { requireTools } from '../helpers/integration.js';
import { startLocalAgent, waitFor } from '../helpers/local-agent.js';
import { removeDir, runCli, scratchDir } from '../helpers/agent-process.js';
import { runCommand } from '../helpers/netns.js';
import { hostManifests } from '../helpers/host-harness.js';

function parseAnswer(text: string): Map<string, string> {
  return new Map(text.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

test('local provisioner: provision through the image cache and a simulated ramdisk, then deprovision with a clean', async (t) => {
  const dir = await scratchDir('local-provision');
  t.after(() => removeDir(dir));
  const disk = randomBytes(256 * 1024);
  const sha256 = createHash('sha256').update(disk).digest('hex');
  const upstream = createHttpServer((req, res) => {
    if (req.url === '/os.raw') res.writeHead(200, { 'content-length': disk.length }).end(disk);
    else if (req.url === '/os.raw.sha256sum') res.writeHead(200).end(`${sha256}  os.raw\n`);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    upstream.closeAllConnections();
    upstream.close();
  });
  const upstreamAddress = upstream.address();
  const imageBase = `http://127.0.0.1:${typeof upstreamAddress === 'object' && upstreamAddress !== null ? upstreamAddress.port : 0}`;

  const { api, boot } = await startLocalAgent(t, dir);
  const image = { url: `${imageBase}/os.raw`, checksum: `${imageBase}/os.raw.sha256sum`, checksumType: 'sha256', format: 'raw' };
  const manifests = (spec: Record<string, unknown>, annotations: Record<string, string> = {}): unknown[] => {
    const [secret, host] = hostManifests('rack1-node1', spec, { 'inspect.metal3.io': 'disabled', ...annotations }) as [unknown, { spec: { bmc: { address: string } } }];
    host.spec.bmc.address = 'fake://rack1-node1-bmc';
    return [secret, host];
  };
  const apply = async (objects: unknown[]): Promise<void> => {
    const res = await fetch(`${api}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(objects) });
    assert.equal(res.status, 200, await res.text());
  };
  const state = async (): Promise<{ state: string; errorMessage: string }> => {
    const body = (await (await fetch(`${api}/api/v1/hosts/rack1-node1`)).json()) as { status: { provisioning: { state: string }; errorMessage: string } };
    return { state: body.status.provisioning.state, errorMessage: body.status.errorMessage };
  };
  await apply(manifests({ image, rootDeviceHints: { deviceName: '/dev/vda' } }));

  const script = await waitFor('the ramdisk script', async () => {
    const res = await fetch(`${boot}/boot/00-5c-52-31-3a-9c.ipxe`);
    const text = await res.text();
    return res.status === 200 && text.includes('rackside.token=') ? text : undefined;
  });
  let token = /rackside\.token=([A-Za-z0-9_-]+)/.exec(script)?.[1] ?? '';
  // Like a real ramdisk, the simulated one has the token of the boot it came from: when rackside
  // boots the host into the ramdisk again (a new token per boot), it reads the new script.
  const rebootIfAsked = async (): Promise<void> => {
    const text = await (await fetch(`${boot}/boot/00-5c-52-31-3a-9c.ipxe`)).text();
    token = /rackside\.token=([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? token;
  };
  const post = async (path: string, body: unknown): Promise<Response> => {
    await rebootIfAsked();
    return fetch(`${boot}/ramdisk/v1/${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  };
  const heartbeat = async (last: string | null): Promise<Map<string, string>> => {
    const res = await post('heartbeat', { version: 'test', boot_mac: '00:5c:52:31:3a:9c', ip: '192.0.2.78', uptime_seconds: 5, last_command_id: last });
    // Before rackside boots the host into the ramdisk for an operation there is no valid token
    // yet (a token is per boot): a real ramdisk keeps heartbeating, so does this one.
    if (res.status === 401) return new Map();
    if (res.status !== 200) {
      const events = (await (await fetch(`${api}/api/v1/events?limit=30`)).json()) as { items: { reason: string; message: string }[] };
      assert.fail(`heartbeat answered ${res.status}; events: ${events.items.map((e) => `${e.reason}: ${e.message}`).join(' | ')}`);
    }
    return parseAnswer(await res.text());
  };

  // A manageable node is cleaned before its first deploy (metal3 `provide`); the deploy then goes to
  // the same running ramdisk (fast track).
  let preDeployClean: string | undefined;
  let last: string | null = null;
  const deploy = await waitFor('the deploy command', async () => {
    const answer = await heartbeat(last);
    if (answer.get('command') === 'deploy') return answer;
    if (answer.get('command') === 'clean' && answer.get('command_id') !== preDeployClean) {
      preDeployClean = answer.get('command_id');
      assert.equal(answer.get('clean_mode'), 'metadata');
      const done = await post('result', {
        command_id: preDeployClean, command: 'clean', status: 'ok', message: null,
        details: { mode: 'metadata', disks: [{ name: '/dev/vda', serial: 'VDA1', size: 8589934592, method: 'metadata', bytes_wiped: 2097152, duration_seconds: 1, status: 'ok', message: null }] },
        log: [],
      });
      assert.equal(done.status, 200);
      last = preDeployClean ?? null;
    }
    const now = await state();
    assert.equal(now.errorMessage, '', 'no error while preparing');
    return undefined;
  });
  assert.equal(deploy.get('image_url'), `${boot}/images/${sha256}`);
  assert.equal(deploy.get('image_checksum'), sha256);
  assert.equal(deploy.get('image_size_bytes'), String(disk.length));
  assert.equal(deploy.get('hint_name'), '/dev/vda');
  const imageUrl = deploy.get('image_url') ?? '';
  assert.ok(Buffer.from(await (await fetch(imageUrl)).arrayBuffer()).equals(disk), 'boot HTTP serves the exact upstream bytes');
  const tail = await fetch(imageUrl, { headers: { range: `bytes=${disk.length - 100}-` } });
  assert.equal(tail.status, 206);
  assert.ok(Buffer.from(await tail.arrayBuffer()).equals(disk.subarray(disk.length - 100)));
  const drive = await fetch(deploy.get('configdrive_url') ?? '');
  assert.equal(drive.status, 200);
  assert.equal(createHash('sha256').update(Buffer.from(await drive.arrayBuffer())).digest('hex'), deploy.get('configdrive_sha256'));

  assert.ok(preDeployClean !== undefined, 'the disks were cleaned before the first deploy');
  const commandId = deploy.get('command_id') ?? '';
  const result = await post('result', {
    command_id: commandId,
    command: 'deploy',
    status: 'ok',
    message: null,
    details: {
      root_device: { name: '/dev/vda', size: 8589934592, rotational: false, serial: 'VDA1' },
      image: { url: imageUrl, bytes: disk.length, checksum_type: 'sha256', checksum: sha256, attempts: 1 },
      config_drive: { offset_bytes: 8589869056, size_bytes: 65536 },
      duration_seconds: 1,
    },
    log: ['deploy: done'],
  });
  assert.equal(result.status, 200);
  await waitFor('provisioned', async () => ((await state()).state === 'provisioned' ? true : undefined));
  const diskScript = await (await fetch(`${boot}/boot/00-5c-52-31-3a-9c.ipxe`)).text();
  assert.match(diskScript, /booting from the local disk/);
  assert.doesNotMatch(diskScript, /rackside\.token=/);

  // Deprovision for a decommissioning: automated cleaning with the whole of every disk zeroed
  // (rackside.io/cleaning-mode: erase) through the ramdisk, booted again with a token of its own:
  // the one of the provisioning boot is refused from now on.
  await apply(manifests({}, { 'rackside.io/cleaning-mode': 'erase' }));
  const firstToken = token;
  await waitFor('the ramdisk script of the deprovisioning boot', async () => {
    const text = await (await fetch(`${boot}/boot/00-5c-52-31-3a-9c.ipxe`)).text();
    const next = /rackside\.token=([A-Za-z0-9_-]+)/.exec(text)?.[1];
    return next !== undefined && next !== firstToken ? next : undefined;
  });
  const stale = await fetch(`${boot}/ramdisk/v1/heartbeat`, {
    method: 'POST', headers: { authorization: `Bearer ${firstToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ version: 'test', boot_mac: null, ip: null, uptime_seconds: 1, last_command_id: null }),
  });
  assert.equal(stale.status, 401, 'the previous boot\'s token is refused');
  const clean = await waitFor('the clean command', async () => {
    const answer = await heartbeat(commandId);
    return answer.get('command') === 'clean' ? answer : undefined;
  });
  assert.equal(clean.get('clean_mode'), 'erase');
  const cleaned = await post('result', {
    command_id: clean.get('command_id'),
    command: 'clean',
    status: 'ok',
    message: null,
    details: {
      mode: 'erase',
      disks: [{
        name: '/dev/vda', serial: 'VDA1', wwn: '0x5000c5001234abcd', model: 'QEMU HARDDISK', size: 8589934592, method: 'zeroout', bytes_wiped: 8589934592,
        duration_seconds: 41, verification: { samples: 18, bytes_read: 2162688, nonzero_samples: 0 }, status: 'ok', message: null,
      }],
    },
    log: [],
  });
  assert.equal(cleaned.status, 200);
  await waitFor('available', async () => ((await state()).state === 'available' ? true : undefined));

  const timeline = (await (await fetch(`${api}/api/v1/hosts/rack1-node1/timeline`)).json()) as { items?: { reason: string; message: string }[] } | { reason: string; message: string }[];
  const items = Array.isArray(timeline) ? timeline : timeline.items ?? [];
  const reasons = items.map((e) => e.reason);
  assert.match(items.find((e) => e.reason === 'CleaningComplete')?.message ?? '', /disks cleaned \(metadata\) before the deploy/);
  assert.match(items.find((e) => e.reason === 'DeprovisioningComplete')?.message ?? '', /disks cleaned \(erase\); the host is available/);
  for (const reason of ['ImageReady', 'DeployDone', 'ProvisioningComplete', 'CleanDone', 'EraseRecorded']) assert.ok(reasons.includes(reason), `${reason} in ${reasons.join(',')}`);

  // Both cleans left a signed erase record, which stock ssh-keygen checks (docs/erase-records.md).
  const records = ((await (await fetch(`${api}/api/v1/erase-records?host=rack1-node1`)).json()) as { items: EraseRecord[] }).items;
  assert.deepEqual(records.map((r) => [r.mode, r.host.provisioningState, r.status]), [['erase', 'deprovisioning', 'ok'], ['metadata', 'provisioning', 'ok']]);
  const erased = records[0];
  assert.ok(erased !== undefined);
  assert.equal(erased.host.bootMACAddress, '00:5c:52:31:3a:9c');
  assert.equal('bmcAddress' in erased.host, false, 'no BMC address: records leave the rack, BMC addresses do not (docs/sync-wire-format.md)');
  assert.deepEqual(erased.disks.map((d) => [d.device, d.serial, d.wwn, d.method, d.bytesWiped, d.verification?.samples]), [['/dev/vda', 'VDA1', '0x5000c5001234abcd', 'zeroout', 8589934592, 18]]);
  await verifyExported(t, dir, api, erased.id);
});

/**
 * Exports a record with the real CLI and checks it with real `ssh-keygen -Y verify`, against the
 * key file in the agent's state directory; an edited copy must fail.
 */
async function verifyExported(t: TestContext, dir: string, api: string, id: string): Promise<void> {
  if (!requireTools(t, ['ssh-keygen'])) return;
  const out = join(dir, 'audit');
  const exported = await runCli(api, ['export', 'erase-record', id, '--output', out]);
  assert.equal(exported.code, 0, exported.stderr);
  assert.match(exported.stdout, /check with:\n {2}ssh-keygen -Y verify /);
  // Trust the key the head node holds, not the exported file's copy: they must agree.
  const pub = (await readFile(join(dir, 'state', 'erase_signing_ed25519_key.pub'), 'utf8')).trim().split(' ');
  const allowed = (await readFile(join(out, 'allowed_signers'), 'utf8')).trim();
  assert.ok(allowed.endsWith(`${pub[0] ?? ''} ${pub[1] ?? ''}`), allowed);
  const principal = allowed.split(' ')[0] ?? '';
  const verify = (document: string) => runCommand('ssh-keygen', ['-Y', 'verify', '-f', join(out, 'allowed_signers'), '-I', principal, '-n', 'rackside-erase-record', '-s', join(out, `${id}.json.sig`)], { input: document, allowFailure: true });
  const document = await readFile(join(out, `${id}.json`), 'utf8');
  const good = await verify(document);
  assert.equal(good.code, 0, good.stderr);
  assert.match(good.stdout + good.stderr, /Good "rackside-erase-record" signature/);
  const forged = await verify(document.replace('"zeroout"', '"dd-zero"'));
  assert.notEqual(forged.code, 0, 'an edited record fails ssh-keygen -Y verify');
}
