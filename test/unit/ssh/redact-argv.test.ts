/**
 * @module Secrets typed on an SSH command line never reach the audit trail or the log (found by
 * test/integration/secret-scan.test.ts: `ssh rack --token T get hosts` stored T in the SSHExec
 * event, which the controller receives, and in the `ssh: exec` log line): `redactArgv` and
 * `redactCommandLine`, and the server's exec, forced-command and shell audit events.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from 'ssh2';
import { REDACTED_ARGUMENT, redactArgv, redactCommandLine } from '../../../agent/ssh/command-line.js';
import { generateKey, startTestServer } from './helpers.js';
import { connectWithKey, exec, shell } from './ssh-client.js';

const SECRET = 'canary-5e1f0c2a9b';
const R = REDACTED_ARGUMENT;

const cases: Record<string, { argv: string[]; shown: string[] }> = {
  '--token VALUE': { argv: ['--token', SECRET, 'get', 'hosts'], shown: ['--token', R, 'get', 'hosts'] },
  '--token=VALUE': { argv: ['get', 'hosts', `--token=${SECRET}`], shown: ['get', 'hosts', `--token=${R}`] },
  '--password VALUE (refused by the CLI, still typed)': { argv: ['bmc', 'redfish://b', '--username', 'root', '--password', SECRET, 'info'], shown: ['bmc', 'redfish://b', '--username', 'root', '--password', R, 'info'] },
  '--password=VALUE': { argv: ['bmc', 'ipmi://b', `--password=${SECRET}`], shown: ['bmc', 'ipmi://b', `--password=${R}`] },
  'an environment-style word': { argv: [`RACKSIDE_TOKEN=${SECRET}`, 'get', 'hosts', `RACKSIDE_BMC_PASSWORD=${SECRET}`], shown: [`RACKSIDE_TOKEN=${R}`, 'get', 'hosts', `RACKSIDE_BMC_PASSWORD=${R}`] },
  'a trailing --token without a value': { argv: ['get', '--token'], shown: ['get', '--token'] },
  'nothing secret': { argv: ['describe', 'host', 'node-1', '--password-file', '/root/pw'], shown: ['describe', 'host', 'node-1', '--password-file', '/root/pw'] },
};
for (const [name, c] of Object.entries(cases)) {
  test(`redactArgv: ${name}`, () => {
    assert.deepEqual(redactArgv(c.argv), c.shown);
  });
}

test('redactCommandLine splits, redacts and joins; an unsplittable line is not shown', () => {
  assert.equal(redactCommandLine(`rackside --token '${SECRET}' get hosts`), `--token '${R}' get hosts`);
  assert.equal(redactCommandLine(`get hosts "--token ${SECRET}`), '(not shown: unterminated double quote)');
});

const ops = generateKey('ed25519', 'ops@laptop');

test('exec and shell audit events carry the command without the secret; the command gets it', async () => {
  const t = await startTestServer(`${ops.publicKey}\n`);
  let client: Client | undefined;
  try {
    client = await connectWithKey(t.port, ops.privateKey);
    const r = await exec(client, `--token ${SECRET} get hosts`);
    assert.equal(r.stdout, `argv: ["--token","${SECRET}","get","hosts"]\n`, 'the command runs with the real argv');
    await shell(client, `get hosts --password=${SECRET}\nexit 0\n`);
    const audited = JSON.stringify(t.events);
    assert.ok(!audited.includes(SECRET), `no audit event carries the secret: ${audited}`);
    assert.deepEqual(t.events.filter((e) => e.type === 'exec').map((e) => e.argv), [['--token', R, 'get', 'hosts'], ['get', 'hosts', `--password=${R}`]]);
  } finally {
    client?.end();
    await t.close();
  }
});

test('a forced command: the requested command line is audited without the secret', async () => {
  const t = await startTestServer(`command="rackside get hosts" ${ops.publicKey}\n`);
  let client: Client | undefined;
  try {
    client = await connectWithKey(t.port, ops.privateKey);
    await exec(client, `apply --token ${SECRET} -f -`);
    const event = t.events.find((e) => e.type === 'exec');
    assert.equal(event?.requestedCommand, `apply --token '${R}' -f -`);
    assert.ok(!JSON.stringify(t.events).includes(SECRET));
  } finally {
    client?.end();
    await t.close();
  }
});
