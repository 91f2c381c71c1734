/**
 * scripts/install.sh into a temporary root (DESTDIR): `rackside install --destdir` lays out
 * the expected tree with the expected modes; the sysusers.d and tmpfiles.d files are accepted
 * by systemd-sysusers/systemd-tmpfiles `--root` (user, 0700 state and cache dirs); the installed
 * app runs with production modules only; a second install keeps a modified config and is
 * otherwise idempotent; uninstall removes what install added and keeps state and config, and
 * --purge removes those too. The script is shellcheck-clean.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, readdir, stat, writeFile, mkdir } from 'node:fs/promises';
import { join, resolve, dirname } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CLI, removeDir, scratchDir } from '../helpers/agent-process.js';
import { hasTool, integrationRequired, requireTools } from '../helpers/integration.js';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SCRIPT = join(ROOT, 'scripts/install.sh');
const UNINSTALL = join(ROOT, 'scripts/uninstall.sh');

/** Every path under `dir` (relative, directories with a trailing /) with its permission bits, skipping the app's contents below `prune`. */
async function tree(dir: string, prune: string, prefix = ''): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = join(prefix, entry.name);
    const mode = (await stat(join(dir, rel))).mode & 0o7777;
    if (entry.isDirectory()) {
      out.set(`${rel}/`, mode);
      if (rel !== prune) for (const [k, v] of await tree(dir, prune, rel)) out.set(k, v);
    } else out.set(rel, mode);
  }
  return out;
}

const APP = 'usr/lib/rackside';
const EXPECTED: Record<string, number> = {
  'etc/': 0o755, 'etc/rackside/': 0o750, 'etc/rackside/rackside.yaml': 0o640, 'etc/rackside/rackside.yaml.example': 0o644,
  'lib/': 0o755, 'lib/systemd/': 0o755, 'lib/systemd/system/': 0o755, 'lib/systemd/system/rackside.service': 0o644,
  'usr/': 0o755, 'usr/bin/': 0o755, 'usr/bin/rackside': 0o755, 'usr/lib/': 0o755, [`${APP}/`]: 0o755,
  'usr/lib/sysusers.d/': 0o755, 'usr/lib/sysusers.d/rackside.conf': 0o644,
  'usr/lib/tmpfiles.d/': 0o755, 'usr/lib/tmpfiles.d/rackside.conf': 0o644,
};

function toolsPresent(t: Parameters<typeof requireTools>[0]): boolean {
  return requireTools(t, ['sh', 'npm', 'install']);
}

let dest = '';
let firstInstall = { code: -1, stdout: '', stderr: '' };

before(async () => {
  dest = await scratchDir('destdir');
  if (!hasTool('npm') && !integrationRequired) return;
  // Through the CLI: `rackside install --destdir DIR` runs scripts/install.sh from this checkout.
  firstInstall = await run(process.execPath, [CLI, 'install', '--destdir', dest], { maxBuffer: 8 << 20 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (err: unknown) => {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
    },
  );
});
after(() => removeDir(dest));

test('install.sh and uninstall.sh are shellcheck-clean', async (t) => {
  if (!requireTools(t, ['shellcheck'])) return;
  await run('shellcheck', [SCRIPT, UNINSTALL]);
});

test('rackside install --destdir lays out the expected tree and modes', async (t) => {
  if (!toolsPresent(t)) return;
  assert.equal(firstInstall.code, 0, firstInstall.stderr);
  assert.match(firstInstall.stdout, /installed \/etc\/rackside\/rackside\.yaml from the example/);
  const found = await tree(dest, APP);
  for (const [path, mode] of Object.entries(EXPECTED)) {
    assert.equal(found.get(path)?.toString(8), mode.toString(8), `${path} (have: ${[...found.keys()].join(', ')})`);
  }
  assert.deepEqual([...found.keys()].filter((p) => !(p in EXPECTED) && !p.startsWith(`${APP}/`)), [], 'nothing else outside the app dir (no /var in a DESTDIR install)');

  const example = await readFile(join(ROOT, 'docs/rackside.example.yaml'), 'utf8');
  assert.equal(await readFile(join(dest, 'etc/rackside/rackside.yaml'), 'utf8'), example);
  assert.equal(await readFile(join(dest, 'etc/rackside/rackside.yaml.example'), 'utf8'), example);
  const unit = await readFile(join(dest, 'lib/systemd/system/rackside.service'), 'utf8');
  assert.match(unit, /^ExecStart=\S*node \/usr\/lib\/rackside\/dist\/agent\/cli\.js agent --config \/etc\/rackside\/rackside\.yaml$/m);
  assert.match(unit, /^StateDirectory=rackside$/m);
  assert.match(await readFile(join(dest, 'usr/bin/rackside'), 'utf8'), /^exec \S*node \/usr\/lib\/rackside\/dist\/agent\/cli\.js "\$@"$/m);
  assert.match(await readFile(join(dest, 'usr/lib/sysusers.d/rackside.conf'), 'utf8'), /^u rackside - "rackside provisioning agent" \/var\/lib\/rackside \/usr\/sbin\/nologin$/m);
  const tmpfiles = await readFile(join(dest, 'usr/lib/tmpfiles.d/rackside.conf'), 'utf8');
  assert.match(tmpfiles, /^d \/var\/lib\/rackside 0700 rackside rackside -$/m);
  assert.match(tmpfiles, /^d \/var\/cache\/rackside 0700 rackside rackside -$/m);

  const app = join(dest, APP);
  const appTop = (await readdir(app)).sort();
  for (const name of ['README.md', 'dist', 'docs', 'images', 'native', 'node_modules', 'package.json', 'scripts']) assert.ok(appTop.includes(name), `${name} in ${appTop.join(', ')}`);
  for (const file of ['dist/agent/cli.js', 'dist/agent/main.js', 'images/ramdisk/init', 'native/udp-bind/build/Release/udp_bind.node', 'scripts/install.sh', 'docs/rackside.example.yaml', 'node_modules/yaml/package.json', 'node_modules/level/package.json']) {
    assert.ok((await stat(join(app, file))).isFile(), file);
  }
  await assert.rejects(stat(join(app, 'dist/test')), 'compiled tests are not installed');
  await assert.rejects(stat(join(app, 'node_modules/typescript')), 'devDependencies are pruned');
  await assert.rejects(stat(join(app, 'node_modules/eslint')), 'devDependencies are pruned');
});

test('the installed app runs on production modules: --help and migrate', async (t) => {
  if (!toolsPresent(t)) return;
  const cli = join(dest, APP, 'dist/agent/cli.js');
  const help = await run(process.execPath, [cli, '--help'], { cwd: '/' });
  assert.match(help.stdout, /rackside doctor/);
  const state = join(dest, 'var/lib/rackside-test');
  t.after(() => removeDir(state));
  const migrated = await run(process.execPath, [cli, 'migrate', '--state-dir', state], { cwd: '/' });
  assert.match(migrated.stdout, /schema version 1/);
  assert.equal(((await stat(state)).mode & 0o777).toString(8), '700');
});

test('systemd-sysusers and systemd-tmpfiles accept the files: user rackside, 0700 state and cache', async (t) => {
  if (!toolsPresent(t) || !requireTools(t, ['systemd-sysusers', 'systemd-tmpfiles'], { root: true })) return;
  const root = await scratchDir('sysroot');
  t.after(() => removeDir(root));
  await mkdir(join(root, 'usr/lib'), { recursive: true });
  await mkdir(join(root, 'etc'));
  for (const d of ['sysusers.d', 'tmpfiles.d']) await run('cp', ['-R', join(dest, 'usr/lib', d), join(root, 'usr/lib/')]);
  await run('systemd-sysusers', [`--root=${root}`, join(root, 'usr/lib/sysusers.d/rackside.conf')]);
  const passwd = await readFile(join(root, 'etc/passwd'), 'utf8');
  const entry = /^rackside:x:(\d+):(\d+):rackside provisioning agent:\/var\/lib\/rackside:\/usr\/sbin\/nologin$/m.exec(passwd);
  assert.ok(entry !== null, passwd);
  assert.ok(Number(entry[1]) < 1000, 'a system uid');
  await run('systemd-tmpfiles', [`--root=${root}`, '--create', join(root, 'usr/lib/tmpfiles.d/rackside.conf')]);
  for (const d of ['var/lib/rackside', 'var/cache/rackside']) {
    const s = await stat(join(root, d));
    assert.equal((s.mode & 0o7777).toString(8), '700', d);
    assert.equal(s.uid, Number(entry[1]), `${d} owned by rackside`);
  }
});

test('a second install keeps a modified config, refreshes the example, and changes nothing else', async (t) => {
  if (!toolsPresent(t)) return;
  const config = join(dest, 'etc/rackside/rackside.yaml');
  const mine = 'agent:\n  id: rack-b07\nprovisioning:\n  interface: eno2\n';
  await writeFile(config, mine);
  await writeFile(join(dest, 'etc/rackside/rackside.yaml.example'), 'stale\n');
  const before = await tree(dest, APP);
  const again = await run('sh', [SCRIPT, '--destdir', dest], { maxBuffer: 8 << 20 });
  assert.match(again.stdout, /kept the existing \/etc\/rackside\/rackside\.yaml/);
  assert.equal(await readFile(config, 'utf8'), mine);
  assert.equal(await readFile(join(dest, 'etc/rackside/rackside.yaml.example'), 'utf8'), await readFile(join(ROOT, 'docs/rackside.example.yaml'), 'utf8'));
  assert.deepEqual(await tree(dest, APP), before);
  await assert.rejects(stat(join(dest, `${APP}.new`)), 'no staging leftovers');
  await assert.rejects(stat(join(dest, `${APP}.old`)), 'no staging leftovers');
});

test('uninstall removes what install added, keeps state and config; --purge removes them', async (t) => {
  if (!toolsPresent(t)) return;
  const state = join(dest, 'var/lib/rackside');
  await mkdir(join(state, 'db'), { recursive: true });
  await writeFile(join(state, 'db/CURRENT'), 'MANIFEST-000001\n');
  const out = await run('sh', [UNINSTALL, '--destdir', dest]);
  assert.match(out.stdout, /kept \/etc\/rackside and \/var\/lib\/rackside/);
  const left = [...(await tree(dest, APP)).keys()].sort();
  assert.deepEqual(left, [
    'etc/', 'etc/rackside/', 'etc/rackside/rackside.yaml', 'lib/', 'lib/systemd/', 'lib/systemd/system/', 'usr/', 'usr/bin/', 'usr/lib/',
    'usr/lib/sysusers.d/', 'usr/lib/tmpfiles.d/', 'var/', 'var/lib/', 'var/lib/rackside/', 'var/lib/rackside/db/', 'var/lib/rackside/db/CURRENT',
  ]);
  // Idempotent: a second uninstall is fine and changes nothing.
  await run('sh', [UNINSTALL, '--destdir', dest]);
  assert.deepEqual([...(await tree(dest, APP)).keys()].sort(), left);

  const purged = await run('sh', [UNINSTALL, '--purge', '--destdir', dest]);
  assert.match(purged.stdout, /removed rackside, its configuration/);
  const remaining = [...(await tree(dest, APP)).keys()];
  assert.ok(!remaining.some((p) => p.startsWith('etc/rackside') || p.startsWith('var/lib/rackside')), remaining.join(', '));
});

test('install.sh refuses bad arguments and a source without a build', async (t) => {
  if (!toolsPresent(t)) return;
  await assert.rejects(run('sh', [SCRIPT, '--bogus']), (e: { code?: number; stderr?: string }) => e.code === 1 && /unknown argument: --bogus/.test(e.stderr ?? ''));
  await assert.rejects(run('sh', [SCRIPT, '--purge', '--destdir', dest]), (e: { stderr?: string }) => /--purge applies to --uninstall only/.test(e.stderr ?? ''));
  const empty = await scratchDir('nosource');
  t.after(() => removeDir(empty));
  await assert.rejects(run('sh', [SCRIPT, '--source', empty, '--destdir', dest]), (e: { stderr?: string }) => /dist\/agent\/cli\.js is missing: run npm run build first/.test(e.stderr ?? ''));
});
