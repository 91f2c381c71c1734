// `npm run demo`'s virtual rack, headless (issue 9): the demo entry (test/lab/demo.ts) checks
// its prerequisites, starts the rack with an IPMI and a Redfish guest, prints the status-page
// URL, and with --exit-when-available stops once every host is available — leaving no
// namespace, tap or process behind. The status page answers while the rack runs.
// Under RACKSIDE_REQUIRE_INTEGRATION=1 missing tools, root or Debian packages fail the test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { skipOrFail } from '../helpers/integration.js';
import { runCommand } from '../helpers/netns.js';
import { checkRackPrerequisites, formatRackPrerequisites } from '../lab/rack/prerequisites.js';
import { rackRamdiskOrSkip } from '../lab/rack/ramdisk-cache.js';

const DEMO = fileURLToPath(new URL('../lab/demo.js', import.meta.url));

/** Command lines of every process that mentions `text`. */
async function processesMentioning(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ');
    if (cmdline.includes(text) && Number(pid) !== process.pid) found.push(`${pid}: ${cmdline.slice(0, 200)}`);
  }
  return found;
}

test('npm run demo: the virtual rack comes up, both hosts become available, and nothing is left behind', { timeout: 10 * 60_000 }, async (t) => {
  const prerequisites = checkRackPrerequisites({ ipmi: true, uefi: false });
  if (!prerequisites.ok) {
    skipOrFail(t, `virtual rack prerequisites missing:\n${formatRackPrerequisites(prerequisites)}`);
    return;
  }
  // Built here so the demo's own output stays about the rack.
  if (await rackRamdiskOrSkip(t) === undefined) return;

  const child = spawn(process.execPath, [DEMO, '--virtual', '--exit-when-available', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { resolve(code); }));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT'); // the demo's own cleanup removes its namespace and guests
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
  });

  // While it runs, the status page is served on the printed URL.
  let statusPage: { status: number; body: string } | undefined;
  while (statusPage === undefined && child.exitCode === null) {
    const url = /status page: (http:\/\/127\.0\.0\.1:\d+)\//.exec(output)?.[1];
    if (url !== undefined) {
      const res = await fetch(`${url}/`);
      statusPage = { status: res.status, body: await res.text() };
    } else {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const code = await exited;
  assert.equal(code, 0, `the demo exited 0 once both hosts were available:\n${output}`);
  assert.ok(statusPage !== undefined, `the demo printed the status page URL:\n${output}`);
  assert.equal(statusPage.status, 200);
  assert.match(statusPage.body, /<html/i);
  for (const host of ['rack1-ipmi-0', 'rack1-redfish-0']) {
    assert.match(output, new RegExp(`${host}: available — \\d CPU, \\d+ MiB, \\d disks`), `${host} became available:\n${output}`);
  }

  const namespace = /namespace (rk\d+r\d+): bridge/.exec(output)?.[1];
  const stateDir = /guest consoles: (\/\S+)\/hosts\//.exec(output)?.[1];
  assert.ok(namespace !== undefined && stateDir !== undefined, output);
  assert.match(output, new RegExp(`removed namespace ${namespace}`));
  const namespaces = (await runCommand('ip', ['netns', 'list'])).stdout;
  assert.ok(!namespaces.includes(namespace), `namespace ${namespace} was deleted (its bridge and taps with it): ${namespaces}`);
  assert.deepEqual(await processesMentioning(stateDir), [], 'no guest, BMC, relay or agent process is left');
});
