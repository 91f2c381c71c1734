/**
 * When rackside was down for longer than the ramdisk kept posting a report, the ramdisk goes on
 * heartbeating with the finished command as its last one. The heartbeat answer then asks for
 * the report again (`command=report`) instead of leaving the operation to its timeout; the
 * report that follows finishes it, and a ramdisk without a saved report ends it with a clear
 * error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandFor } from '../../../agent/provisioner/local/node.js';
import { ramdiskRig } from './ramdisk-rig.js';

const heartbeat = (last: string | null): unknown => ({ version: 't', boot_mac: null, ip: '192.0.2.9', uptime_seconds: 600, last_command_id: last });

test('commandFor: the current command named as done but unfinished is asked for again; others as before', () => {
  const op = { kind: 'deploy', commandId: 'cmd-1', startedAtMs: 0, deadlineMs: 1, phase: 'sent' } as const;
  assert.deepEqual(commandFor(op, 'cmd-1'), { command: 'report', commandId: 'cmd-1' });
  assert.deepEqual(commandFor(op, null), { command: 'deploy', commandId: 'cmd-1' });
  assert.deepEqual(commandFor(op, 'cmd-0'), { command: 'deploy', commandId: 'cmd-1' });
  assert.deepEqual(commandFor({ ...op, phase: 'done' }, 'cmd-1'), { command: 'none' });
  assert.deepEqual(commandFor({ ...op, phase: 'failed' }, 'cmd-1'), { command: 'none' });
  assert.deepEqual(commandFor(undefined, 'cmd-1'), { command: 'none' });
});

test('a heartbeat naming an unfinished inspection as done gets command=report; the inventory sent again finishes it', async (t) => {
  const r = await ramdiskRig(t, 'inspect');
  const answer = await r.post('heartbeat', heartbeat('cmd-1'));
  assert.equal(answer.status, 200);
  assert.match(answer.text, /^command=report\ncommand_id=cmd-1\n/);
  const [event] = (await r.store.listEvents()).filter((e) => e.reason === 'RamdiskHeartbeat');
  assert.match(event?.message ?? '', /finished inspect but the report never arrived: asked for it again/);
  assert.equal((await r.post('inventory', { command_id: 'cmd-1', inventory: { cpu: { count: 2 } } })).status, 200);
  assert.equal((await r.nodes.get('uid-1')).local?.op?.phase, 'done');
  assert.match((await r.post('heartbeat', heartbeat('cmd-1'))).text, /^command=none\n/, 'nothing more once it arrived');
});

test('a ramdisk without a saved report ends the deployment now, with its message', async (t) => {
  const r = await ramdiskRig(t, 'deploy');
  assert.match((await r.post('heartbeat', heartbeat('cmd-1'))).text, /^command=report\n/);
  const message = 'the ramdisk has no saved report of command cmd-1 (did it restart?)';
  assert.equal((await r.post('result', { command_id: 'cmd-1', command: 'report', status: 'error', message, details: null, log: [] })).status, 200);
  const op = (await r.nodes.get('uid-1')).local?.op;
  assert.equal(op?.phase, 'failed');
  assert.equal(op.message, message);
});
