import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRamdiskHeartbeat, encodeRamdiskCommand, RamdiskEndpoint, RamdiskProtocolError, type RamdiskCommand } from '../../../images/ramdisk-protocol.js';

test('encodeRamdiskCommand renders the KEY=VALUE lines the sh agent reads', () => {
  assert.equal(encodeRamdiskCommand({ command: 'inspect', commandId: 'c-1', intervalSeconds: 5 }), 'command=inspect\ncommand_id=c-1\ninterval_seconds=5\n');
  assert.equal(encodeRamdiskCommand({ command: 'none' }), 'command=none\n');
  assert.equal(RamdiskEndpoint.heartbeat, '/ramdisk/v1/heartbeat');
});

const badCommands: Record<string, RamdiskCommand> = {
  'unknown command': { command: 'rm-rf' as RamdiskCommand['command'] },
  'id with a newline': { command: 'inspect', commandId: 'a\ncommand=reboot' },
  'id with a space': { command: 'inspect', commandId: 'a b' },
  'zero interval': { command: 'none', intervalSeconds: 0 },
  'fractional interval': { command: 'none', intervalSeconds: 1.5 },
};
for (const [name, cmd] of Object.entries(badCommands)) {
  test(`encodeRamdiskCommand rejects ${name}`, () => {
    assert.throws(() => encodeRamdiskCommand(cmd), RamdiskProtocolError);
  });
}

test('decodeRamdiskHeartbeat maps the agent body and rejects wrong shapes', () => {
  assert.deepEqual(decodeRamdiskHeartbeat({ version: '1', boot_mac: '52:54:00:ab:cd:ef', ip: null, uptime_seconds: 12, last_command_id: null }), {
    version: '1', bootMac: '52:54:00:ab:cd:ef', ip: null, uptimeSeconds: 12, lastCommandId: null,
  });
  for (const bad of [null, [], 'x', { version: 3 }, { uptime_seconds: -1 }, { uptime_seconds: '12' }]) {
    assert.throws(() => decodeRamdiskHeartbeat(bad), RamdiskProtocolError, JSON.stringify(bad));
  }
});
