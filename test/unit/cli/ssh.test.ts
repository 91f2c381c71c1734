/**
 * `rackside ssh status`: the formatter table-tested over the tunnel's states, and the command end
 * to end through `runCli` against the real management app (test/helpers/fake-backend.ts) serving
 * `GET /api/v1/ssh` the way agent/main.ts does, with output modes, usage errors and a malformed
 * answer.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { decodeSshStatus, formatSshStatus, type SshApiStatus } from '../../../agent/cli/ssh.js';
import { runCli } from '../../../agent/cli/run.js';
import { captureCliIo } from '../../helpers/cli-io.js';
import { HELP_TEXT } from '../../../agent/cli/help.js';
import { FakeBackend, startFakeApi, type FakeApi } from '../../helpers/fake-backend.js';

const NOW = Date.parse('2026-03-01T10:00:00.000Z');
const SERVER = { address: '0.0.0.0', port: 2222, fingerprint: 'SHA256:3b1Vd0cXo7b0fQ5rQ2yJm0hXz6n0cX9m5x1z0q2w4eU' };
const DISABLED = { state: 'disabled' as const, since: '2026-03-01T09:00:00.000Z', remotePort: null, reconnects: 0 };
const BACKOFF: SshApiStatus['tunnel'] = {
  state: 'backoff', since: '2026-03-01T09:58:00.000Z', remotePort: 2201, reconnects: 4,
  bastion: 'bastion.example:22', bastionFingerprint: 'SHA256:bastionkey', lastError: 'connect ECONNREFUSED 203.0.113.7:22',
  nextAttemptAt: '2026-03-01T10:00:30.000Z',
};

const formatCases: Record<string, { status: SshApiStatus; want: string[] }> = {
  'server and a tunnel in backoff': {
    status: { server: SERVER, tunnel: BACKOFF },
    want: [
      'server      0.0.0.0:2222',
      `host key    ${SERVER.fingerprint}`,
      'tunnel      backoff since 2026-03-01T09:58:00.000Z (2m ago)',
      'bastion     bastion.example:22 (SHA256:bastionkey)',
      'remote port 2201',
      'reconnects  4',
      'last error  connect ECONNREFUSED 203.0.113.7:22',
      'next try    2026-03-01T10:00:30.000Z (in 30s)',
    ],
  },
  'connected tunnel for hours, IPv6 listener': {
    status: {
      server: { ...SERVER, address: '::' },
      tunnel: { state: 'connected', since: '2026-03-01T04:00:00.000Z', remotePort: 2201, reconnects: 0, bastion: 'bastion.example:22', bastionFingerprint: 'SHA256:bastionkey' },
    },
    want: [
      'server      [::]:2222',
      `host key    ${SERVER.fingerprint}`,
      'tunnel      connected since 2026-03-01T04:00:00.000Z (6h ago)',
      'bastion     bastion.example:22 (SHA256:bastionkey)',
      'remote port 2201',
      'reconnects  0',
    ],
  },
  'connecting, no remote port yet, no fingerprint seen': {
    status: { server: SERVER, tunnel: { state: 'connecting', since: '2026-03-01T09:59:58.000Z', remotePort: null, reconnects: 0, bastion: 'bastion.example:22' } },
    want: [
      'server      0.0.0.0:2222',
      `host key    ${SERVER.fingerprint}`,
      'tunnel      connecting since 2026-03-01T09:59:58.000Z (2s ago)',
      'bastion     bastion.example:22',
      'remote port (none yet)',
      'reconnects  0',
    ],
  },
  'server without a tunnel section': {
    status: { server: SERVER, tunnel: DISABLED },
    want: ['server      0.0.0.0:2222', `host key    ${SERVER.fingerprint}`, 'tunnel      (not configured: no ssh.tunnel section with a pinned hostKey)'],
  },
  'no ssh section': {
    status: { server: null, tunnel: DISABLED },
    want: ['server      (not configured: no ssh section in the config)', 'tunnel      (not configured: no ssh.tunnel section with a pinned hostKey)'],
  },
  'remote access not started yet': {
    status: { server: SERVER, tunnel: null },
    want: ['server      0.0.0.0:2222', `host key    ${SERVER.fingerprint}`, 'tunnel      (not started yet)'],
  },
};
for (const [name, c] of Object.entries(formatCases)) {
  test(`formatSshStatus: ${name}`, () => {
    assert.equal(formatSshStatus(c.status, NOW), c.want.join('\n'));
  });
}

const badBodies: Record<string, [unknown, string]> = {
  'not an object': [[1, 2], 'body'],
  'server without fingerprint': [{ server: { address: '0.0.0.0', port: 2222 }, tunnel: null }, 'server'],
  'missing server': [{ tunnel: null }, 'server'],
  'unknown tunnel state': [{ server: null, tunnel: { ...DISABLED, state: 'up' } }, 'tunnel.state'],
  'tunnel without since': [{ server: null, tunnel: { state: 'connected', remotePort: 1, reconnects: 0 } }, 'tunnel.since'],
  'remote port as text': [{ server: null, tunnel: { ...DISABLED, remotePort: '2201' } }, 'tunnel.remotePort'],
};
for (const [name, [body, field]] of Object.entries(badBodies)) {
  test(`decodeSshStatus refuses: ${name}`, () => {
    assert.throws(() => decodeSshStatus(body), { exitCode: 1, message: `the agent's /api/v1/ssh answer has no valid ${field}` });
  });
}

let api: FakeApi;
let served: unknown = { server: SERVER, tunnel: BACKOFF };

before(async () => {
  api = await startFakeApi(new FakeBackend(), {
    extraRoutes: (router) => {
      router.get('/ssh', (_req, res) => { res.json(served); });
    },
  });
});
after(async () => {
  await api.close();
});

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const captured = captureCliIo(api.baseUrl, NOW);
  const code = await runCli(args, captured.io);
  return { code, out: captured.out(), err: captured.err() };
}

test('ssh status prints the server and the tunnel from GET /api/v1/ssh', async () => {
  served = { server: SERVER, tunnel: BACKOFF };
  const { code, out, err } = await cli(['ssh', 'status']);
  assert.equal(err, '');
  assert.equal(code, 0);
  assert.equal(out, `${formatCases['server and a tunnel in backoff']!.want.join('\n')}\n`);
});

test('ssh status says "not configured" when the agent has no ssh section', async () => {
  served = { server: null, tunnel: DISABLED };
  const { code, out } = await cli(['ssh', 'status']);
  assert.equal(code, 0);
  assert.match(out, /^server {6}\(not configured: no ssh section in the config\)\ntunnel {6}\(not configured/);
});

test('ssh status -o json and -o yaml print the API body unchanged', async () => {
  served = { server: SERVER, tunnel: BACKOFF };
  const json = await cli(['ssh', 'status', '-o', 'json']);
  assert.equal(json.code, 0);
  assert.deepEqual(JSON.parse(json.out), served);
  const yaml = await cli(['ssh', 'status', '--output=yaml']);
  assert.equal(yaml.code, 0);
  assert.deepEqual(parseYaml(yaml.out), served);
});

const usageCases: Record<string, [string[], RegExp]> = {
  'no subcommand': [['ssh'], /usage: rackside ssh status/],
  'unknown subcommand': [['ssh', 'connect'], /usage: rackside ssh status/],
  'extra argument': [['ssh', 'status', 'now'], /usage: rackside ssh status/],
  'bad -o': [['ssh', 'status', '-o', 'wide'], /-o must be json or yaml, got "wide"/],
  'option of another command': [['ssh', 'status', '--watch'], /option --watch does not apply to "rackside ssh"/],
};
for (const [name, [args, message]] of Object.entries(usageCases)) {
  test(`ssh usage error: ${name}`, async () => {
    const { code, out, err } = await cli(args);
    assert.equal(code, 2);
    assert.equal(out, '');
    assert.match(err, message);
  });
}

test('ssh status reports a malformed agent answer with exit 1', async () => {
  served = { server: 'yes', tunnel: null };
  const { code, err } = await cli(['ssh', 'status']);
  assert.equal(code, 1);
  assert.equal(err, "error: the agent's /api/v1/ssh answer has no valid server\n");
});

test('ssh status is listed in rackside --help', () => {
  assert.match(HELP_TEXT, /rackside ssh status \[-o json\|yaml\]/);
});
