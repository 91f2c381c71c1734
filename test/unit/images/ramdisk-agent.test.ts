import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { defaultAgentScriptDir } from '../../../images/builder.js';
import { fakeEnv, runAgent } from './agent-harness.js';
import { requireTools, run, scratchDir } from './helpers.js';

const token = 'tok_0123456789abcdef';

test('the ramdisk scripts are shellcheck-clean POSIX sh', (t) => {
  if (!requireTools(t, { shellcheck: 'shellcheck' })) return;
  const dir = defaultAgentScriptDir();
  const files = readdirSync(dir).map((f) => join(dir, f));
  assert.ok(files.length >= 3);
  assert.equal(run('shellcheck', ['-s', 'sh', '-S', 'info', ...files]), '');
});

test('inventory: the agent reports the fake machine in the IPA inventory shape', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const { dir, cleanup } = scratchDir('agent-inventory');
  try {
    const r = await runAgent(['inventory'], fakeEnv(dir));
    assert.equal(r.code, 0);
    const inv = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.deepEqual({ ...(inv.cpu as object), architecture: 'x' }, {
      model_name: 'QEMU Virtual CPU version 2.5+', frequency: '2596.156', count: 2, architecture: 'x', flags: ['fpu', 'sse2', 'lm'],
    });
    assert.deepEqual(inv.memory, { total: 230000 * 1024, physical_mb: 256 });
    assert.deepEqual(inv.disks, [
      {
        name: '/dev/sda', size: 4194304 * 512, rotational: true, model: 'QEMU HARDDISK', vendor: 'ATA', serial: 'SATA-"SER"\\1',
        wwn: '0x5000c5001234abcd', wwn_with_extension: '0x5000c5001234abcd', wwn_vendor_extension: null, hctl: '0:0:0:0', by_path: null,
      },
      {
        name: '/dev/vda', size: 2097152 * 512, rotational: false, model: null, vendor: '0x1af4', serial: 'virtio-serial-1',
        wwn: null, wwn_with_extension: null, wwn_vendor_extension: null, hctl: null, by_path: null,
      },
    ]);
    assert.deepEqual(inv.interfaces, [
      { name: 'rstest9', mac_address: '52:54:00:ab:cd:ef', ipv4_address: null, ipv6_address: null, has_carrier: true, speed_mbps: 1000, driver: 'e1000', vendor: '0x8086', product: '0x100e', pci_address: '0000:00:03.0', pxe_enabled: true },
    ]);
    assert.deepEqual(inv.system_vendor, {
      manufacturer: 'QEMU', product_name: 'Standard PC (i440FX + PIIX, 1996)', serial_number: 'SN-42',
      firmware: { vendor: 'SeaBIOS', version: '1.16.2-debian-1.16.2-1', build_date: '04/01/2014' },
    });
    assert.deepEqual(inv.boot, { current_boot_mode: 'bios', pxe_interface: '52:54:00:ab:cd:ef', secure_boot: null });
  } finally {
    cleanup();
  }
});

test('inventory: Secure Boot from the SecureBoot EFI variable (the byte after the 4 attribute bytes)', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  for (const [value, expected] of [[1, true], [0, false]] as const) {
    const { dir, cleanup } = scratchDir('agent-secure-boot');
    try {
      const env = fakeEnv(dir);
      const vars = join(env.RACKSIDE_SYSFS ?? '', 'firmware', 'efi', 'efivars');
      mkdirSync(vars, { recursive: true });
      writeFileSync(join(vars, 'SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c'), Uint8Array.of(0x06, 0, 0, 0, value));
      const r = await runAgent(['inventory'], env);
      assert.equal(r.code, 0);
      assert.deepEqual((JSON.parse(r.stdout) as { boot: unknown }).boot, { current_boot_mode: 'uefi', pxe_interface: '52:54:00:ab:cd:ef', secure_boot: expected });
    } finally {
      cleanup();
    }
  }
});

interface Recorded {
  path: string;
  authorization: string | undefined;
  body: unknown;
}

async function withServer(answer: (path: string, req: IncomingMessage, res: ServerResponse) => void, fn: (url: string, seen: Recorded[]) => Promise<void>): Promise<void> {
  const seen: Recorded[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body: body === '' ? null : JSON.parse(body) });
      answer(req.url ?? '', req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
  } finally {
    server.close();
  }
}

test('once: heartbeat with the token, then inspect posts the inventory with the command id', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const { dir, cleanup } = scratchDir('agent-once');
  try {
    const env = fakeEnv(dir);
    await withServer(
      (path, req, res) => {
        if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
        res.writeHead(200, { 'content-type': 'text/plain' }).end(path.endsWith('/heartbeat') ? 'command=inspect\ncommand_id=c-1\ninterval_seconds=5\n' : 'ok\n');
      },
      async (url, seen) => {
        writeFileSync(join(env.RACKSIDE_ETC!, 'url'), `${url}\n`);
        writeFileSync(join(env.RACKSIDE_ETC!, 'token'), `${token}\n`);
        // Inspection listens for LLDP meanwhile (lib-lldp.sh): a stand-in listener prints one neighbour.
        const lldp = join(dir, 'rackside-lldp');
        writeFileSync(lldp, `#!/bin/sh\necho "$*" > ${join(dir, 'lldp.args')}\necho '{"interface":"rstest9","chassis_id":"00:1c:73:aa:bb:cc","port_id":"Ethernet12","system_name":"leaf-1","vlans":[42]}'\n`, { mode: 0o755 });
        const r = await runAgent(['once'], { ...env, RACKSIDE_LLDP: lldp });
        assert.equal(r.code, 0, r.stdout);
        assert.deepEqual(seen.map((s) => s.path), ['/ramdisk/v1/heartbeat', '/ramdisk/v1/inventory']);
        assert.ok(seen.every((s) => s.authorization === `Bearer ${token}`));
        assert.deepEqual(seen[0]!.body, { version: '0.1.0-test', boot_mac: '52:54:00:ab:cd:ef', ip: null, uptime_seconds: 12, last_command_id: null });
        const inv = seen[1]!.body as { command_id: string; inventory: { cpu: { count: number } }; lldp: unknown[] };
        assert.equal(inv.command_id, 'c-1');
        assert.equal(inv.inventory.cpu.count, 2);
        assert.deepEqual(inv.lldp, [{ interface: 'rstest9', chassis_id: '00:1c:73:aa:bb:cc', port_id: 'Ethernet12', system_name: 'leaf-1', vlans: [42] }], 'the neighbour heard during inspection');
        assert.match(readFileSync(join(dir, 'lldp.args'), 'utf8'), /^30 /, 'listens up to 30 s by default');
        assert.match(r.stdout, /rackside-ramdisk: inspect: inventory sent/);
      },
    );
  } finally {
    cleanup();
  }
});

test('once: the kernel command line wins over the overlay; a 401 is a failed heartbeat; unknown commands get an error result', async (t) => {
  if (!requireTools(t, { busybox: 'busybox-static' })) return;
  const { dir, cleanup } = scratchDir('agent-401');
  try {
    const env = fakeEnv(dir);
    await withServer(
      (path, req, res) => {
        if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
        res.writeHead(200).end(path.endsWith('/heartbeat') ? 'command=format-everything\ncommand_id=c-2\n' : '');
      },
      async (url, seen) => {
        writeFileSync(join(env.RACKSIDE_ETC!, 'url'), 'http://127.0.0.1:9/unused\n');
        writeFileSync(join(env.RACKSIDE_ETC!, 'token'), 'wrong-token-000000\n');
        const bad = await runAgent(['once'], env);
        assert.notEqual(bad.code, 0);
        assert.match(bad.stdout, /heartbeat to http:\/\/127\.0\.0\.1:9\/unused failed/);

        writeFileSync(join(env.RACKSIDE_PROCFS!, 'cmdline'), `console=ttyS0 rackside.url=${url} rackside.token=wrong-token-000000\n`);
        const denied = await runAgent(['once'], env);
        assert.notEqual(denied.code, 0);
        assert.equal(seen.length, 1, 'the command-line URL is used');
        assert.equal(seen[0]!.authorization, 'Bearer wrong-token-000000');

        writeFileSync(join(env.RACKSIDE_PROCFS!, 'cmdline'), `rackside.url=${url} rackside.token=${token}\n`);
        const unknown = await runAgent(['once'], env);
        assert.equal(unknown.code, 0, unknown.stdout);
        const last = seen.at(-1)!;
        assert.equal(last.path, '/ramdisk/v1/result');
        const { log, ...result } = last.body as { log: string[] };
        assert.deepEqual(result, { command_id: 'c-2', command: 'format-everything', status: 'error', message: 'unknown command', details: null });
        assert.ok(log.includes('unknown command format-everything'), JSON.stringify(log));
      },
    );
  } finally {
    cleanup();
  }
});
