/**
 * The status page in a real browser (Debian Chromium via playwright-core) against a real agent
 * with the demo provisioner: the rack view's tiles and counts, filters, a host moving from
 * `available` to `provisioned` live, the host page's SVG timeline with flight-recorder lanes
 * fed through the store and its diagnosis updating live, escaping of hostile text, keyboard
 * navigation, labels, colour contrast (light and dark), and phone width. Screenshots of every
 * page go to test-artifacts/.
 */
import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { BareMetalHost } from '../../agent/host/types.js';
import type { StoredEvent } from '../../agent/store/types.js';
import { DEMO_HOSTS } from '../../agent/provisioner/demo.js';
import { openEraseRecordBook } from '../../agent/erase/open.js';
import { buildEraseRecord } from '../../agent/erase/record.js';
import { ARTIFACTS, browserSkipReason, freePort, launchBrowser, scratch, startUiAgent } from './web-ui-harness.js';
import { A11Y_CHECKS, applyImage, attributesOf, columnsOf, getHost, listHosts, waitUntil } from './web-ui-helpers.js';

const XSS = '<img src=x onerror=alert(1)>';
const skip = browserSkipReason();

/** Appends events to the agent's store, `secondsAgo` before now each. */
function events(host: string, mac: string, list: [number, string, string, Record<string, unknown>, ('Normal' | 'Warning')?][]): Omit<StoredEvent, 'seq'>[] {
  const nowMs = Date.now();
  return list.map(([secondsAgo, source, reason, data, type]) => ({
    time: new Date(nowMs - secondsAgo * 1000).toISOString(), type: type ?? 'Normal', reason, message: `${reason} (synthetic)`, source, host, mac, data,
  }));
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
}

test('status page in a real browser', { skip: skip ?? false, timeout: 240_000 }, async (t) => {
  const dir = await scratch('ui');
  const ui = await startUiAgent(dir, { port: await freePort() });
  t.after(async () => {
    await ui.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const browser = await launchBrowser();
  t.after(() => browser.close());
  await mkdir(ARTIFACTS, { recursive: true });
  const page = await browser.context.newPage();
  const pageErrors: string[] = [];
  const dialogs: string[] = [];
  page.on('pageerror', (error) => { pageErrors.push(error.message); });
  page.on('dialog', (dialog) => { dialogs.push(dialog.message()); void dialog.dismiss(); });
  t.after(() => {
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });

  // The demo rack settles quickly at timeScale 0.01: wait for its resting states first.
  await waitUntil('the demo rack settled', async () => {
    const hosts = await listHosts(ui.url);
    const state = (n: string): string | undefined => hosts.find((x) => x.metadata.name === n)?.status.provisioning.state;
    return state('demo-provisioned') === 'provisioned' && state('demo-available') === 'available' && state('demo-inspecting') === 'inspecting';
  });

  await t.test('rack view: one tile per host and counts per state', async () => {
    await page.goto(`${ui.url}/`);
    await page.locator('#live-status[data-state="live"]').waitFor();
    await page.locator('li.tile').first().waitFor();
    assert.equal(await page.locator('li.tile').count(), DEMO_HOSTS.length);
    for (const demo of DEMO_HOSTS) {
      const tile = page.locator(`li.tile[data-host="${demo.name}"]`);
      assert.equal(await tile.locator('.tile-name').textContent(), demo.name);
      assert.equal(await tile.locator('.tile-desc').textContent(), demo.description);
    }
    // The page's chips equal the API's counts (compared together: demo-validation-error keeps
    // retrying with backoff, so a single read of each could straddle a change).
    let mismatch = '';
    await waitUntil('the chips to match the API', async () => {
      const hosts = await listHosts(ui.url);
      const expected = new Map<string, number>([['all', hosts.length], ['errors', hosts.filter((x) => x.status.operationalStatus === 'error').length]]);
      for (const host of hosts) {
        const label = host.status.provisioning.state === '' ? 'new' : host.status.provisioning.state;
        expected.set(label, (expected.get(label) ?? 0) + 1);
      }
      const shown = await page.evaluate<[string, string][]>(`[...document.querySelectorAll('[data-testid^="count-"]')].map((b) => [b.dataset.testid.slice(6), b.querySelector('strong').textContent])`);
      mismatch = JSON.stringify({ expected: [...expected].sort(), shown: shown.sort() });
      return shown.length === expected.size && shown.every(([label, count]) => String(expected.get(label)) === count);
    }, 30_000).catch((error: unknown) => { throw new Error(`${String(error)}: ${mismatch}`); });
    assert.equal(await page.locator('[data-testid="count-all"] strong').textContent(), String(DEMO_HOSTS.length));
    assert.equal(await page.locator('li.tile[data-host="demo-provisioned"] [data-testid="state"]').textContent(), 'provisioned');
    assert.equal(await page.locator('li.tile[data-host="demo-provisioned"] [data-testid="power"]').textContent(), 'Power: On');
    assert.match(await page.locator('li.tile[data-host="demo-registration-error"] [data-testid="error"]').textContent() ?? '', /registration error: failed to register new host/);
    assert.equal(await page.locator('#panel-sync .not-configured').count(), 1, 'no controller: sync says not configured');
    assert.match(await page.locator('#panel-boot').textContent() ?? '', /Not configured/);
    await shot(page, 'rack.png');
  });

  await t.test('rack view: filters by text, state chip and errors only (kept in the URL)', async () => {
    await page.fill('#filter-text', 'forever');
    // (page.waitForFunction evaluates with eval, which the page's CSP rightly refuses: poll from here.)
    await waitUntil('four tiles', async () => (await page.locator('li.tile').count()) === 4);
    assert.match(page.url(), /\?q=forever$/);
    await page.fill('#filter-text', '');
    await page.click('[data-testid="count-errors"]');
    const errorTiles = await attributesOf(page, 'li.tile', 'data-category');
    assert.ok(errorTiles.length >= 2 && errorTiles.every((c) => c === 'error'), JSON.stringify(errorTiles));
    await shot(page, 'rack-errors-only.png');
    await page.click('[data-testid="count-errors"]');
    await page.selectOption('#filter-state', 'provisioned');
    assert.deepEqual(await attributesOf(page, 'li.tile', 'data-host'), ['demo-provisioned']);
    await page.selectOption('#filter-state', '');
    assert.equal(await page.locator('li.tile').count(), DEMO_HOSTS.length);
  });

  await t.test('a host moves from available to provisioned while the page is open', async () => {
    await page.evaluate('window.__sameDocument = true');
    const tile = page.locator('li.tile[data-host="demo-available"]');
    assert.equal(await tile.getAttribute('data-state'), 'available');
    await applyImage(ui.url, 'demo-available');
    await page.locator('li.tile[data-host="demo-available"][data-state="provisioned"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate('window.__sameDocument === true'), true, 'updated live, not by a reload');
    assert.equal(await tile.locator('[data-testid="state"]').textContent(), 'provisioned');
    assert.equal(await tile.locator('.step-text').textContent(), 'Step 6 of 6: provisioned (complete)');
    await shot(page, 'rack-after-provision.png');
  });

  await t.test('which hosts booted over TLS: the tile badge follows the flight recorder live, the host page says why', async () => {
    await page.goto(ui.url);
    await page.evaluate('window.__sameDocument = true');
    const host = await getHost(ui.url, 'demo-available');
    const mac = (host.spec.bootMACAddress ?? '').toLowerCase();
    const badge = page.locator('li.tile[data-host="demo-available"] [data-testid="boot-transport"]');
    await ui.agent.store.appendEvents(events('demo-available', mac, [
      [30, 'bootsvc:http', 'HTTPRequest', { method: 'GET', path: `/uki/${mac}.efi`, status: 200, bytes: 40_000_000, durationMs: 900, completed: true, tls: true }],
      [20, 'bootsvc:http', 'HTTPRequest', { method: 'POST', path: '/ramdisk/v1/heartbeat', status: 200, bytes: 80, durationMs: 3, completed: true, tls: true }],
    ]));
    await page.locator('li.tile[data-host="demo-available"] [data-transport="https"]').waitFor({ timeout: 15_000 });
    assert.equal(await badge.textContent(), 'Last boot over: HTTPS');
    assert.match(await badge.getAttribute('title') ?? '', /over HTTPS; its ramdisk called \/ramdisk\/v1\/heartbeat over HTTPS/);
    assert.equal(await page.locator('li.tile[data-host="demo-provisioned"] [data-testid="boot-transport"]').count(), 0, 'no badge for a host without a recorded boot');
    // A ramdisk that calls back in clear after an HTTPS boot is flagged, not shown as HTTPS.
    await ui.agent.store.appendEvents(events('demo-available', mac, [[0, 'bootsvc:http', 'HTTPRequest', { method: 'POST', path: '/ramdisk/v1/heartbeat', status: 200, bytes: 80, durationMs: 3, completed: true }]]));
    await page.locator('li.tile[data-host="demo-available"] [data-transport="mixed"]').waitFor({ timeout: 15_000 });
    assert.equal(await page.evaluate('window.__sameDocument === true'), true, 'updated live, not by a reload');
    const fresh = await fetch(`${ui.url}/api/v1/boot/transports`).then((r) => r.json()) as { items: { mac: string; host?: string; boot?: { transport: string }; ramdisk?: { transport: string } }[] };
    const record = fresh.items.find((r) => r.mac === mac);
    assert.deepEqual([record?.host, record?.boot?.transport, record?.ramdisk?.transport], ['demo-available', 'https', 'http']);
    await page.goto(`${ui.url}/hosts/demo-available`);
    const detail = page.locator('[data-testid="boot-transport-detail"]');
    await detail.locator('[data-transport="mixed"]').waitFor();
    assert.match(await detail.textContent() ?? '', /Last boot fetched \/uki\/.*\.efi over HTTPS; its ramdisk called \/ramdisk\/v1\/heartbeat over HTTP\./);
  });

  await t.test('host page: controller phases and flight-recorder lanes in the SVG timeline, diagnosis live', async () => {
    const host = await getHost(ui.url, 'demo-inspecting');
    const mac = host.spec.bootMACAddress ?? '';
    await ui.agent.store.appendEvents(events('demo-inspecting', mac, [
      [430, 'bootsvc:dhcp', 'DHCPDiscover', { message: 'discover', xid: 17, arch: 'x86_64', archType: 7, firmware: 'uefi' }],
      [429.9, 'bootsvc:dhcp', 'DHCPOffer', { message: 'offer', xid: 17, address: '172.22.0.50', bootFile: 'ipxe.efi' }],
      [428, 'bootsvc:dhcp', 'DHCPRequest', { message: 'request', xid: 17 }],
      [427.9, 'bootsvc:dhcp', 'DHCPAck', { message: 'ack', xid: 17, address: '172.22.0.50', bootFile: 'ipxe.efi' }],
      [427, 'bootsvc:tftp', 'TFTPReadRequest', { phase: 'rrq', file: 'ipxe.efi', clientAddress: '172.22.0.50' }],
      [425.5, 'bootsvc:tftp', 'TFTPTransferDone', { phase: 'done', file: 'ipxe.efi', clientAddress: '172.22.0.50', bytes: 1_031_168, durationMs: 1400 }],
      [420, 'bootsvc:http', 'HTTPRequest', { method: 'GET', path: `/boot/${mac}.ipxe`, status: 200, bytes: 512, durationMs: 4, completed: true }],
      [418, 'bootsvc:http', 'HTTPRequest', { method: 'GET', path: '/images/vmlinuz', status: 200, bytes: 8_000_000, durationMs: 1900, completed: true }],
      [412, 'bootsvc:http', 'HTTPRequest', { method: 'GET', path: '/images/initramfs.cpio.gz', status: 200, bytes: 60_000_000, durationMs: 5800, completed: true }],
    ]));
    await page.goto(`${ui.url}/hosts/demo-inspecting`);
    const svg = page.locator('svg[data-testid="timeline"]');
    await svg.waitFor();
    const marks = async (lane: string): Promise<number> => svg.locator(`circle.tl-mark[data-lane="${lane}"]`).count();
    assert.deepEqual([await marks('dhcp'), await marks('tftp'), await marks('http'), await marks('ramdisk')], [4, 2, 3, 0]);
    assert.ok(await marks('controller') >= 2, 'state changes of the host controller');
    const controllerPhases = await svg.locator('g.tl-span-group[data-lane="controller"] title').allTextContents();
    assert.ok(controllerPhases.some((x) => x.startsWith('registering:')) && controllerPhases.some((x) => x.startsWith('inspecting:')), JSON.stringify(controllerPhases));
    assert.deepEqual(await svg.locator('g.tl-span-group[data-lane="tftp"] title').allTextContents().then((x) => x.map((s) => s.split(':')[0])), ['ipxe.efi']);
    assert.match(await svg.locator('g.tl-span-group[data-lane="dhcp"] title').first().textContent() ?? '', /^lease 172\.22\.0\.50: /);
    assert.ok(await svg.locator('.tl-break').count() >= 1, 'the idle minutes before the inspection collapse into a break');
    assert.match(await svg.getAttribute('aria-labelledby') ?? '', /title .*desc/);
    const finding = page.locator('li.finding[data-rule="ramdisk-silent"]');
    await finding.waitFor();
    assert.match(await finding.textContent() ?? '', /Kernel and initrd fetched, no ramdisk heartbeat for [67] min \d\d s: check the console \/ kernel arguments/);
    await shot(page, 'host-timeline.png');

    await page.evaluate('window.__sameDocument = true');
    await ui.agent.store.appendEvents(events('demo-inspecting', mac, [[0, 'bootsvc:ramdisk', 'RamdiskHeartbeat', { type: 'heartbeat' }]]));
    await page.locator('circle.tl-mark[data-lane="ramdisk"]').waitFor({ timeout: 15_000 });
    assert.equal(await marks('ramdisk'), 1);
    await finding.waitFor({ state: 'detached', timeout: 15_000 });
    assert.equal(await page.evaluate('window.__sameDocument === true'), true);
    assert.equal(await page.locator('table[data-testid="events"] tbody tr').first().locator('td').nth(3).textContent(), 'RamdiskHeartbeat');
  });

  await t.test('host page: wrong-architecture offers and an unanswered DHCP exchange are diagnosed', async () => {
    const host = await getHost(ui.url, 'demo-preparing');
    const mac = host.spec.bootMACAddress ?? '';
    await ui.agent.store.appendEvents(events('demo-preparing', mac, [
      [60, 'bootsvc:dhcp', 'DHCPDiscover', { message: 'discover', xid: 1, arch: 'arm64', archType: 11, firmware: 'uefi' }],
      [59.9, 'bootsvc:dhcp', 'DHCPOffer', { message: 'offer', xid: 1, bootFile: 'ipxe.efi' }],
      [56, 'bootsvc:dhcp', 'DHCPDiscover', { message: 'discover', xid: 2, arch: 'arm64', archType: 11 }],
      [55.9, 'bootsvc:dhcp', 'DHCPOffer', { message: 'offer', xid: 2, bootFile: 'ipxe.efi' }],
      [40, 'bmc', 'BMCCallFailed', { call: 'power-on', ok: false, detail: 'connect ETIMEDOUT 10.0.0.9:443' }, 'Warning'],
    ]));
    await page.goto(`${ui.url}/hosts/demo-preparing`);
    await page.locator('li.finding').first().waitFor();
    const rules = await attributesOf(page, 'li.finding', 'data-rule');
    assert.deepEqual(rules, ['dhcp-offer-no-request', 'arch-mismatch', 'bmc-unreachable']);
    assert.match(await page.locator('li.finding[data-rule="arch-mismatch"] strong').textContent() ?? '', /arm64 client was offered an x86 binary/);
    assert.match(await page.locator('li.finding[data-rule="dhcp-offer-no-request"] strong').textContent() ?? '', /Offers sent, no REQUEST: another DHCP server answered\?/);
    assert.match(await page.locator('li.finding[data-rule="bmc-unreachable"] strong').textContent() ?? '', /BMC unreachable since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    assert.ok(await page.locator('svg circle.tl-mark.warn[data-lane="bmc"]').count() === 1);
    await shot(page, 'host-diagnosis.png');
  });

  await t.test('host page: erase records appear live, with links to the signed text and its signature', async () => {
    const host = await getHost(ui.url, 'demo-available');
    await page.goto(`${ui.url}/hosts/demo-available`);
    const section = page.locator('section#erase-records');
    await section.waitFor();
    assert.equal(await section.locator('tbody tr').textContent(), 'None');
    // A record as the agent writes one (same store, same key), then the event that announces it.
    const book = await openEraseRecordBook(ui.agent.store.eraseRecords, join(dir, 'state'), 'ui-test-rack');
    const nowMs = Date.now();
    const record = buildEraseRecord({
      agentId: 'ui-test-rack', commandId: 'ui-clean-1', softwareRaidKept: true, startedAt: new Date(nowMs - 90_000), finishedAt: new Date(nowMs), status: 'error', message: '1 disk(s) could not be erased',
      host: { name: 'demo-available', namespace: 'default', uid: host.metadata.uid, bootMACAddress: null, system: null, provisioningState: 'deprovisioning' },
      details: {
        mode: 'erase',
        disks: [
          { name: '/dev/sda', serial: 'S1', wwn: null, model: 'M', sizeBytes: 1e9, method: 'zeroout', bytesWiped: 1e9, durationSeconds: 80, verification: { samples: 18, bytesRead: 2_162_688, nonZeroSamples: 0 }, status: 'ok', message: null },
          { name: '/dev/sdb', serial: 'S2', wwn: null, model: 'M', sizeBytes: 1e9, method: 'zeroout', bytesWiped: 1e9, durationSeconds: 80, verification: { samples: 18, bytesRead: 2_162_688, nonZeroSamples: 3 }, status: 'error', message: 'verification found data in 3 of 18 samples' },
        ],
      },
    });
    await book.add(record);
    await ui.agent.store.appendEvents([{ time: new Date().toISOString(), type: 'Warning', reason: 'EraseRecorded', message: `erase record ${record.id}`, source: 'ramdisk', host: 'demo-available' }]);
    const row = section.locator('tbody tr', { hasText: record.id });
    await row.waitFor({ timeout: 15_000 });
    const cells = await row.locator('td').allTextContents();
    assert.deepEqual(cells.slice(1), ['erase', '2', '1 of 2 disks failed', `${record.id} · signature`]);
    assert.equal(await row.locator('td').nth(3).locator('span.error').count(), 1, 'a failed clean is marked');
    const signed = await page.request.get(`${ui.url}${await row.locator('a').first().getAttribute('href') ?? ''}`);
    assert.equal(await signed.text(), (await book.get(record.id))?.document, 'the link serves the signed text');
    assert.match(await (await page.request.get(`${ui.url}${await row.locator('a').nth(1).getAttribute('href') ?? ''}`)).text(), /^-----BEGIN SSH SIGNATURE-----\n/);
    await shot(page, 'host-erase-records.png');
  });

  await t.test('host names, annotations, error messages and events with markup are shown as text', async () => {
    const base = await getHost(ui.url, 'demo-provisioned');
    const hostile: BareMetalHost = structuredClone(base);
    hostile.metadata = { name: 'xss-host', namespace: 'default', uid: '', resourceVersion: '', generation: 1, creationTimestamp: '', annotations: { 'baremetalhost.metal3.io/paused': '', 'rackside.io/description': XSS } };
    hostile.spec = { ...hostile.spec, bootMACAddress: '52:54:00:00:00:99' };
    hostile.status = { ...hostile.status, operationalStatus: 'error', errorType: 'provisioning error', errorMessage: XSS };
    await ui.agent.store.commit([{ kind: 'host', op: 'put', object: hostile, ifVersion: 'absent' }]);
    await ui.agent.store.appendEvents([{ time: new Date().toISOString(), type: 'Warning', reason: `Injected${XSS}`, message: XSS, source: `test${XSS}`, host: 'xss-host' }]);
    for (const path of ['/', '/hosts/xss-host']) {
      await page.goto(`${ui.url}${path}`);
      await page.getByText(XSS).first().waitFor();
      assert.ok(await page.getByText(XSS).count() >= 2, `${path}: the text is visible`);
      assert.equal(await page.locator('img').count(), 0, `${path}: no element was created from the text`);
      assert.equal(await page.evaluate('document.body.innerHTML.includes("<img")'), false);
    }
    assert.match(await page.locator('[data-testid="status-error"]').textContent() ?? '', /provisioning error: <img src=x onerror=alert\(1\)>/);
    assert.equal(await page.locator(`table[data-testid="events"] td:text-is("${XSS}")`).count(), 1);
    assert.equal(await page.title(), 'xss-host · rackside');
    assert.deepEqual(dialogs, [], 'no script ran');
    await shot(page, 'host-escaping.png');
  });

  await t.test('keyboard: skip link, tiles reachable with Tab, Enter opens a host', async () => {
    await page.goto(`${ui.url}/`);
    await page.locator('li.tile').first().waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement.className'), 'skip-link');
    assert.match(await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle'), /solid|auto/, 'focus is visible');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate('document.activeElement.id'), 'main');
    let reached = false;
    for (let i = 0; i < 40 && !reached; i += 1) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate<boolean>('document.activeElement.closest("li.tile") !== null');
    }
    assert.ok(reached, 'a tile link is reachable by keyboard');
    const target = await page.evaluate<string>('document.activeElement.getAttribute("href")');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${ui.url}${target}`);
    await page.locator('h1').first().waitFor();
  });

  await t.test('labels, landmarks and contrast of at least 4.5:1 in light and dark schemes', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const path of ['/', '/hosts/demo-validation-error']) {
        await page.goto(`${ui.url}${path}`);
        await page.locator(path === '/' ? 'li.tile' : 'svg[data-testid="timeline"]').first().waitFor();
        const report = await page.evaluate<{ unlabeled: string[]; landmarks: string[]; lowContrast: string[] }>(A11Y_CHECKS);
        assert.deepEqual(report.unlabeled, [], `${scheme} ${path}: every control has a label`);
        assert.deepEqual(report.landmarks, ['banner', 'main'], `${scheme} ${path}`);
        assert.deepEqual(report.lowContrast, [], `${scheme} ${path}: text contrast`);
      }
      await shot(page, `host-${scheme}.png`);
      await page.goto(`${ui.url}/`);
      await page.locator('li.tile').first().waitFor();
      await shot(page, `rack-${scheme}.png`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  await t.test('phone width: one column, no horizontal scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [path, name] of [['/', 'rack-phone.png'], ['/hosts/demo-provisioned', 'host-phone.png']] as const) {
      await page.goto(`${ui.url}${path}`);
      await page.locator(path === '/' ? 'li.tile' : 'svg[data-testid="timeline"]').first().waitFor();
      assert.equal(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), true, `${path} fits`);
      await shot(page, name);
    }
    await page.goto(`${ui.url}/`);
    await page.locator('li.tile').first().waitFor();
    const lefts = await columnsOf(page, 'li.tile');
    assert.equal(lefts, 1, 'tiles stack in one column');
    await page.setViewportSize({ width: 2200, height: 1000 });
    await page.reload();
    await page.locator('li.tile').first().waitFor();
    const wide = await columnsOf(page, 'li.tile');
    assert.ok(wide >= 4, `a wide monitor shows several columns (${wide})`);
    await shot(page, 'rack-wide.png');
  });
});
