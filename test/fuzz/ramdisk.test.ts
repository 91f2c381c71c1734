/**
 * Fuzzes the ramdisk callbacks (agent/provisioner/local/ramdisk-service.ts over
 * images/ramdisk-protocol.ts and ramdisk-results.ts) through the real express router on loopback:
 * heartbeat, inventory and result bodies mutated by structure and as text, with valid, forged and
 * missing tokens and odd content types, against a host whose operation (inspect, deploy, clean,
 * raid; booting or sent) varies per input. Every request must be answered 200, or 400/401/413/415
 * with a plain-text `error=` line — never 500; a heartbeat answer is KEY=VALUE lines without control
 * characters; the host's node entry stays readable; an accepted inventory maps to hardware details
 * or an InventoryError (what the provisioner does with it next).
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=120000 node --test dist/test/fuzz/ramdisk.test.js`.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import express from 'express';
import { InventoryError, hardwareDetailsFromInventory } from '../../agent/provisioner/local/inventory.js';
import type { NodeEntry, NodeOperation } from '../../agent/provisioner/local/node.js';
import { NodeTable } from '../../agent/provisioner/local/node-table.js';
import { createRamdiskRouter } from '../../agent/provisioner/local/ramdisk-service.js';
import { createMemoryStore } from '../../agent/store/index.js';
import type { Dice } from './dice.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { mutateJson, mutateJsonText, type Json } from './mutate-json.js';
import { showText } from './mutate-text.js';

const INPUTS = fuzzInputs(2000);
const UID = 'uid-fuzz-0';
const TOKEN = 'tok-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const COMMAND_ID = 'cmd-1';

const DISK: Json = { name: '/dev/sda', size: 2 ** 31, rotational: true, model: 'QEMU HARDDISK', vendor: 'ATA', serial: 'S1', wwn: '0x5', wwn_with_extension: '0x5', wwn_vendor_extension: null, hctl: '0:0:0:0', by_path: '/dev/disk/by-path/pci-0000:00:1f.2-ata-1.0' };
const INVENTORY: Json = {
  cpu: { model_name: 'QEMU Virtual CPU', count: 2, architecture: 'x86_64', frequency: '2400', flags: ['sse2'] },
  memory: { physical_mb: 1024, total: 1073741824 },
  disks: [{ name: '/dev/vda', size: 10737418240, rotational: false, serial: 'D0', by_path: '/dev/disk/by-path/virtio-pci-0000:00:05.0' }],
  interfaces: [{ name: 'eth0', mac_address: '00:5c:52:31:3a:9c', ipv4_address: '192.0.2.50', ipv6_address: 'fe80::1', pxe_enabled: true, speed_mbps: 1000 }],
  system_vendor: { manufacturer: 'QEMU', product_name: 'Standard PC', serial_number: 'SN1', firmware: { vendor: 'EDK II', version: '1.0', build_date: '2024' } },
  boot: { current_boot_mode: 'uefi' },
  hostname: 'localhost',
};

type Endpoint = 'heartbeat' | 'inventory' | 'result';
const SEEDS: Readonly<Record<Endpoint, readonly Json[]>> = {
  heartbeat: [
    { version: 'rackside-ramdisk 0.1.0', boot_mac: '52:54:00:12:34:56', ip: '192.0.2.50', uptime_seconds: 12.5, last_command_id: null },
    { version: 'rackside-ramdisk 0.1.0', boot_mac: null, ip: null, uptime_seconds: 900, last_command_id: COMMAND_ID },
  ],
  inventory: [{ command_id: COMMAND_ID, inventory: INVENTORY }],
  result: [
    { command_id: COMMAND_ID, command: 'deploy', status: 'ok', message: null, log: ['deploy: done'], details: { root_device: DISK, image: { url: 'http://h/i', bytes: 10, checksum_type: 'sha256', checksum: 'ab', attempts: 2 }, config_drive: { offset_bytes: 4096, size_bytes: 1024 }, duration_seconds: 3 } },
    { command_id: COMMAND_ID, command: 'clean', status: 'error', message: '1 disk(s) could not be erased', log: ['clean: start', 'dd: error'], details: { mode: 'erase', disks: [{ name: '/dev/vda', serial: null, size: 5, method: 'dd-zero', bytes_wiped: 5, duration_seconds: 1, status: 'error', message: 'x' }] } },
    { command_id: COMMAND_ID, command: 'clean', status: 'ok', message: null, details: { mode: 'metadata', disks: [{ name: '/dev/vda', serial: 'S', size: 5, method: 'metadata', bytes_wiped: 2, duration_seconds: 0, status: 'ok', message: null }] } },
    { command_id: COMMAND_ID, command: 'raid', status: 'ok', message: null, details: { volumes: [{ device: '/dev/md0', level: '1', members: ['/dev/vda1', '/dev/vdb1'], size: 9 }] } },
    { command_id: COMMAND_ID, command: 'deploy', status: 'error', message: 'checksum mismatch', log: ['a', 'b'], details: null },
    { command_id: null, command: 'poweroff', status: 'ok', message: null, details: null },
  ],
};
const KEYS = ['command_id', 'command', 'status', 'message', 'log', 'details', 'inventory', 'version', 'boot_mac', 'ip', 'uptime_seconds', 'last_command_id',
  'root_device', 'image', 'config_drive', 'duration_seconds', 'disks', 'volumes', 'members', 'mode', 'method', 'bytes_wiped', 'size', 'name', 'serial'];
const STRINGS = ['deploy', 'clean', 'raid', 'inspect', 'poweroff', 'ok', 'error', 'metadata', 'erase', 'zeroout', 'dd-zero', COMMAND_ID, 'cmd-2', '/dev/vda'];
const ALL_SEEDS = [...SEEDS.heartbeat, ...SEEDS.inventory, ...SEEDS.result];

interface RamdiskInput {
  readonly endpoint: Endpoint;
  readonly token: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string;
  readonly op: NodeOperation['kind'];
  readonly phase: NodeOperation['phase'];
}

function operation(kind: NodeOperation['kind'], phase: NodeOperation['phase']): NodeOperation {
  const op: NodeOperation = { kind, commandId: COMMAND_ID, startedAtMs: 0, deadlineMs: 1e15, phase };
  if (kind === 'deploy') op.deploy = { imageUrl: 'http://192.0.2.1:8081/images/os.img', checksum: 'a'.repeat(64), checksumType: 'sha256', rootDeviceHints: { deviceName: '/dev/vda' } };
  if (kind === 'clean') op.clean = { mode: 'metadata' };
  if (kind === 'raid') op.raid = { volumes: [{ level: '1', physicalDisks: [{ deviceName: '/dev/vda' }, { deviceName: '/dev/vdb' }] }] };
  return op;
}

function entryFor(input: RamdiskInput): NodeEntry {
  return {
    boot: 'ramdisk', token: TOKEN,
    local: { provID: 'prov-0', name: 'node-0', bootMACAddress: '52:54:00:12:34:56', state: 'deploying', op: operation(input.op, input.phase) },
  };
}

const store = createMemoryStore({ eventCap: 2000 });
const nodes = new NodeTable(store.nodes, store.inventories);
let server: Server | undefined;
let baseUrl = '';

before(async () => {
  const app = express();
  app.set('env', 'test'); // express's last-resort handler would print every 415's stack
  app.use(createRamdiskRouter({ store, nodes, nowMs: () => 1_800_000_000_000 }));
  server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => { resolve(s); }); });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server?.closeAllConnections();
  const s = server;
  if (s !== undefined) await new Promise<void>((resolve) => { s.close(() => { resolve(); }); });
});

const ACCEPTED = new Set([200, 400, 401, 413, 415]);

async function check(input: RamdiskInput): Promise<string> {
  await store.nodes.put(UID, entryFor(input));
  const headers: Record<string, string> = {};
  if (input.token !== undefined) headers.authorization = `Bearer ${input.token}`;
  if (input.contentType !== undefined) headers['content-type'] = input.contentType;
  const res = await fetch(`${baseUrl}/ramdisk/v1/${input.endpoint}`, { method: 'POST', headers, body: input.body });
  const text = await res.text();
  assert.ok(ACCEPTED.has(res.status), `HTTP ${res.status}: ${text.slice(0, 500)}`);
  if (res.status === 200 && input.endpoint === 'heartbeat') {
    for (const line of text.split('\n').filter((l) => l !== '')) {
      assert.match(line, /^[a-z0-9_]+=./, 'heartbeat answer line is KEY=VALUE');
      assert.ok(!/[\p{Cc}]/u.test(line), `control character in heartbeat answer line ${JSON.stringify(line)}`);
    }
  }
  if (res.status === 400 || res.status === 401) assert.match(text, /^error=/, 'a refusal says why');
  if (res.status === 200 && input.endpoint === 'inventory') {
    try {
      hardwareDetailsFromInventory(await nodes.inventory(UID));
    } catch (err) {
      if (!(err instanceof InventoryError)) throw err;
    }
  }
  return `${input.endpoint} ${res.status}`;
}

function generate(dice: Dice, i: number): RamdiskInput {
  const endpoint = (['heartbeat', 'inventory', 'result'] as const)[i % 3] ?? 'result';
  const seeds = SEEDS[endpoint];
  const options = { seeds: ALL_SEEDS, keys: KEYS, strings: STRINGS };
  const seed = dice.pick(seeds);
  const body = dice.chance(0.8) ? JSON.stringify(mutateJson(dice, seed, options)) : mutateJsonText(dice, seed, options);
  return {
    endpoint,
    token: dice.chance(0.9) ? TOKEN : dice.pick([undefined, '', 'forged', `${TOKEN}x`, TOKEN.toLowerCase()]),
    contentType: dice.chance(0.9) ? 'application/json' : dice.pick([undefined, 'text/plain', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded']),
    body,
    op: dice.pick(['inspect', 'deploy', 'clean', 'raid'] as const),
    phase: dice.pick(['booting', 'sent', 'sent', 'done', 'failed'] as const),
  };
}

/** Inputs of past findings. */
const REGRESSIONS: readonly RamdiskInput[] = [
  // An inventory nested ~9000 levels deep (17 KiB) overflowed the store's JSON encoder: HTTP 500
  // (fixed in ramdisk-service.ts: deeper than 32 levels is a 400).
  {
    endpoint: 'inventory', token: TOKEN, contentType: 'application/json', op: 'inspect', phase: 'sent',
    body: `{"command_id":"${COMMAND_ID}","inventory":{"disks":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`,
  },
];

test(`fuzz ramdisk callbacks: ${INPUTS} heartbeat, inventory and result requests`, async (t) => {
  const report = await runFuzz<RamdiskInput>({
    name: 'ramdisk', seed: fuzzSeed(0x7a3d15c), inputs: INPUTS, regressions: REGRESSIONS, generate, check,
    show: (input) => `${input.endpoint} token=${String(input.token)} type=${String(input.contentType)} op=${input.op}/${input.phase} body ${showText(input.body)}`,
  });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  for (const endpoint of ['heartbeat', 'inventory', 'result']) {
    assert.ok((report.outcomes[`${endpoint} 200`] ?? 0) > 0, `some ${endpoint} bodies are accepted`);
    assert.ok((report.outcomes[`${endpoint} 400`] ?? 0) > 0, `some ${endpoint} bodies are refused`);
  }
});
