/** `rackside images build`: usage errors are caught before any build starts. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CliIo } from '../../../agent/cli/io.js';
import { archsToBuild } from '../../../agent/cli/images.js';
import { runCli } from '../../../agent/cli/run.js';

function io(files: Record<string, string> = {}): { io: CliIo; err: () => string } {
  let err = '';
  return {
    err: () => err,
    io: {
      stdout: () => undefined,
      stderr: (t) => {
        err += t;
      },
      env: {},
      readStdin: () => Promise.resolve(''),
      readFile: (path) => (files[path] !== undefined ? Promise.resolve(files[path]) : Promise.reject(new Error('ENOENT'))),
      fetch: globalThis.fetch,
      now: () => 0,
      sleep: () => Promise.resolve(),
      clientVersion: 't',
      runAgent: () => Promise.resolve(0),
    },
  };
}

const cases: Record<string, { argv: string[]; message: RegExp }> = {
  'no subcommand': { argv: ['images'], message: /usage: rackside images build/ },
  'unknown subcommand': { argv: ['images', 'push'], message: /usage: rackside images build/ },
  'bad format': { argv: ['images', 'build', '--format', 'vhd', '--output', '/tmp/x'], message: /--format must be initrd or iso/ },
  'kernel without modules': { argv: ['images', 'build', '--kernel', '/boot/vmlinuz', '--output', '/tmp/x'], message: /--kernel and --modules go together/ },
  'no output and no config': { argv: ['images', 'build'], message: /no --output and no readable config/ },
  'unreadable --config': { argv: ['images', 'build', '--config', '/nope.yaml'], message: /cannot read --config \/nope\.yaml/ },
  'option of another command': { argv: ['images', 'build', '--hard'], message: /--hard does not apply/ },
  'unknown --arch': { argv: ['images', 'build', '--arch', 'ppc64le', '--output', '/tmp/x'], message: /--arch must be amd64 or arm64, got "ppc64le"/ },
};

for (const [name, c] of Object.entries(cases)) {
  test(`images build: ${name} → exit 2`, async () => {
    const run = io();
    assert.equal(await runCli(c.argv, run.io), 2);
    assert.match(run.err(), c.message);
  });
}

test('images build without --arch: the head node\'s and every other architecture into their served places; one with --output, --format iso or --arch', () => {
  const head = process.arch === 'arm64' ? 'arm64' : 'amd64';
  const other = head === 'amd64' ? 'arm64' : 'amd64';
  assert.deepEqual(archsToBuild({}, 'initrd'), [head, other]);
  assert.deepEqual(archsToBuild({ output: '/tmp/x' }, 'initrd'), [head], 'an explicit --output names one build');
  assert.deepEqual(archsToBuild({}, 'iso'), [head], 'the ISO is the head node\'s only');
  assert.deepEqual(archsToBuild({ arch: 'aarch64' }, 'initrd'), ['arm64']);
  assert.deepEqual(archsToBuild({ arch: 'x86_64', output: '/tmp/x' }, 'initrd'), ['amd64']);
  assert.deepEqual(archsToBuild({ arch: other }, 'iso'), [other], 'another architecture\'s ISO (arm64: UEFI only) is built when asked');
});
