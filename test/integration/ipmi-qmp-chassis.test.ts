// ipmi_sim's chassis-control script in QEMU mode, against a fake QMP server on a unix socket
// (the real QEMU end-to-end run comes with the lab's guests): IPMI power status is "QMP
// answers", reset → system_reset, soft-off → system_powerdown, off → quit, on → the start
// command, which sees the boot device set over IPMI. Needs ipmi_sim and ipmitool.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseBmcAddress } from '../../drivers/bmc-address.js';
import { createIpmiDriver } from '../../drivers/ipmi/ipmi-driver.js';
import { startIpmiSim } from '../lab/ipmi/ipmi-sim.js';
import { ipmitool, requireIpmiTools } from '../lab/ipmi/ipmitool.js';
import { qmpCommand } from '../lab/ipmi/qmp-command.js';

/** A QMP server that answers every command and records it. */
async function fakeQmp(path: string): Promise<{ commands: string[]; close: () => Promise<void> }> {
  const commands: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.write(`${JSON.stringify({ QMP: { version: { qemu: { major: 8, minor: 0, micro: 0 } }, capabilities: [] } })}\n`);
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const { execute } = JSON.parse(buffered.slice(0, nl)) as { execute: string };
        buffered = buffered.slice(nl + 1);
        if (execute !== 'qmp_capabilities') commands.push(execute);
        const result = execute === 'query-status' ? { status: 'running', running: true } : {};
        socket.write(`${JSON.stringify({ return: result })}\n`);
      }
    });
  });
  await new Promise<void>((resolve) => { server.listen(path, resolve); });
  return {
    commands,
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(() => { resolve(); }); }),
  };
}

test('qmp-command talks QMP (greeting, capabilities, command) and reports errors', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-qmp-'));
  const qmp = await fakeQmp(join(dir, 'qmp.sock'));
  try {
    assert.deepEqual(await qmpCommand(join(dir, 'qmp.sock'), 'query-status'), { status: 'running', running: true });
    assert.deepEqual(qmp.commands, ['query-status']);
    await assert.rejects(qmpCommand(join(dir, 'absent.sock'), 'quit'), /ENOENT/);
  } finally {
    await qmp.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('IPMI chassis commands drive a QEMU guest through QMP', async (t) => {
  if (!requireIpmiTools(t)) return;
  const dir = await mkdtemp(join(tmpdir(), 'rackside-ipmi-qmp-'));
  const socketPath = join(dir, 'qmp.sock');
  const startScript = join(dir, 'start-guest');
  await writeFile(startScript, `#!/bin/sh\necho "start boot=$(cat "$1/boot")" >> ${join(dir, 'started.log')}\n`);
  await chmod(startScript, 0o755);
  let qmp = await fakeQmp(socketPath);
  const sim = await startIpmiSim({
    qemu: { qmpSocket: socketPath, startCommand: startScript, qmpClient: fileURLToPath(new URL('../lab/ipmi/qmp-command.js', import.meta.url)) },
  });
  const driver = createIpmiDriver(parseBmcAddress(`ipmi://${sim.host}:${sim.port}`), { username: sim.username, password: sim.password }, { keepaliveMs: 0 });
  try {
    assert.equal(await driver.power.getPowerState(), 'on', 'the guest answers QMP');
    assert.match(await ipmitool(sim, ['chassis', 'power', 'status']), /is on/);
    await driver.power.setPower('reset');
    assert.equal(qmp.commands.at(-1), 'system_reset');
    await driver.power.setPower('soft-off');
    assert.equal(qmp.commands.at(-1), 'system_powerdown');
    await driver.power.setPower('off');
    assert.equal(qmp.commands.at(-1), 'quit');
    await qmp.close(); // QEMU exits on quit
    assert.equal(await driver.power.getPowerState(), 'off');
    await driver.bootDevice.setBootDevice('pxe');
    await driver.power.setPower('on');
    let started = '';
    for (let i = 0; i < 50 && !started.includes('start'); i++) {
      started = await readFile(join(dir, 'started.log'), 'utf8').catch(() => '');
      await sleep(50);
    }
    assert.equal(started.trim(), 'start boot=pxe');
    qmp = await fakeQmp(socketPath); // the started guest opens its QMP socket
    assert.equal(await driver.power.getPowerState(), 'on');
  } finally {
    await driver.close();
    await sim.stop();
    await qmp.close();
    await rm(dir, { recursive: true, force: true });
  }
});
