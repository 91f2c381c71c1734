/**
 * The status page's "Discovered" filter and Enroll action (docs/discovery.md) in a real
 * browser against a real agent (demo provisioner): two hosts as discovery records them
 * (unmanaged, `rackside.io/discovered-at`, no BMC) — one with the BMC in-band enlistment
 * proposed and its Secret, one without — beside the demo rack. The chip shows only them (and
 * says so in the URL); the tiles show the proposed BMC; Enroll applies the proposal through
 * `POST /api/v1/hosts/:name/enroll`, and for the host without one the dialog takes an address,
 * user and password, which the page does not show afterwards. Enrolled hosts leave the filter.
 */
import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, browserSkipReason, freePort, launchBrowser, scratch, startUiAgent } from './web-ui-harness.js';
import { A11Y_CHECKS, getHost, waitUntil } from './web-ui-helpers.js';

const skip = browserSkipReason();
/** Loopback addresses: nothing outside this machine is ever asked. */
const PROPOSED = 'ipmi://127.0.0.1:6991';
const TYPED = 'ipmi://127.0.0.1:6992';
const TYPED_PASSWORD = 'typed-Passw0rd-not-shown';

function base64(text: string): string {
  return Buffer.from(text).toString('base64');
}

/** A host as discovery records it, and (with a proposal) the Secret it names. */
function discoveredManifests(name: string, proposed?: string): unknown[] {
  const annotations: Record<string, string> = { 'rackside.io/discovered-at': '2026-12-06T10:00:00Z' };
  const secret = [];
  if (proposed !== undefined) {
    annotations['rackside.io/proposed-bmc-address'] = proposed;
    annotations['rackside.io/proposed-bmc-credentials'] = `${name}-bmc-secret`;
    secret.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-bmc-secret`, namespace: 'default' }, type: 'Opaque', data: { username: base64('rackside'), password: base64('in-band-0123456789') } });
  }
  return [...secret, {
    apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost', metadata: { name, namespace: 'default', annotations },
    spec: { online: false, bootMACAddress: '52:54:00:00:0d:' + (proposed === undefined ? '02' : '01') },
  }];
}

async function apply(url: string, docs: unknown[]): Promise<void> {
  const res = await fetch(`${url}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(docs) });
  assert.equal(res.status, 200, `apply: ${await res.text()}`);
}

async function tileNames(page: Page): Promise<string[]> {
  // One evaluation: the list is re-rendered as hosts change, so no element is held across calls.
  const names = await page.evaluate<string[]>(`[...document.querySelectorAll('#tiles li.tile')].map((t) => t.getAttribute('data-host') ?? '')`);
  return names.sort();
}

test('status page: the Discovered filter shows the proposed BMC and Enroll gives the host its BMC', { skip: skip ?? false, timeout: 180_000 }, async (t) => {
  const dir = await scratch('ui-discovered');
  const ui = await startUiAgent(dir, { port: await freePort() });
  t.after(async () => {
    await ui.stop();
    await rm(dir, { recursive: true, force: true });
  });
  await apply(ui.url, [...discoveredManifests('found-1', PROPOSED), ...discoveredManifests('found-2')]);
  await waitUntil('both hosts unmanaged', async () => (await getHost(ui.url, 'found-1')).status.provisioning.state === 'unmanaged'
    && (await getHost(ui.url, 'found-2')).status.provisioning.state === 'unmanaged');
  const browser = await launchBrowser();
  t.after(() => browser.close());
  await mkdir(ARTIFACTS, { recursive: true });
  const page = await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => { pageErrors.push(error.message); });

  await page.goto(ui.url);
  const chip = page.getByTestId('count-discovered');
  await chip.filter({ hasText: '2' }).waitFor();
  await chip.click();
  await waitUntil('only the discovered tiles', async () => (await tileNames(page)).join() === 'found-1,found-2', 10_000);
  assert.equal(new URL(page.url()).searchParams.get('discovered'), '1', 'the filter is in the URL');
  assert.equal(await chip.getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('li.tile[data-host="found-1"] [data-testid="proposed-bmc"]').textContent(), `Proposed BMC ${PROPOSED}`);
  assert.equal(await page.locator('li.tile[data-host="found-2"] [data-testid="proposed-bmc"]').textContent(), 'No BMC found in-band');
  const a11y = await page.evaluate<{ unlabeled: string[]; lowContrast: string[] }>(A11Y_CHECKS);
  assert.deepEqual(a11y.lowContrast, [], 'the proposed BMC and the Enroll button have readable contrast (WCAG 2.2 SC 1.4.3)');
  await page.screenshot({ path: join(ARTIFACTS, 'discovered-filter.png'), fullPage: true });

  await page.locator('li.tile[data-host="found-1"]').getByRole('button', { name: 'Enroll…' }).click();
  const dialog = page.locator('dialog[open]');
  assert.match(await dialog.textContent() ?? '', new RegExp(`proposed BMC ${PROPOSED.replaceAll('.', '\\.')}`));
  await dialog.locator('button[type="submit"]').click();
  await dialog.waitFor({ state: 'detached' });
  const enrolled = await getHost(ui.url, 'found-1');
  assert.deepEqual(enrolled.spec.bmc, { address: PROPOSED, credentialsName: 'found-1-bmc-secret' }, 'the proposal went into spec.bmc');
  await waitUntil('found-1 leaves the filter', async () => (await tileNames(page)).join() === 'found-2', 15_000);

  await page.locator('li.tile[data-host="found-2"]').getByRole('button', { name: 'Enroll…' }).click();
  await dialog.getByLabel('BMC address').fill(TYPED);
  await dialog.getByLabel('User name').fill('admin');
  await dialog.getByLabel('Password').fill(TYPED_PASSWORD);
  assert.deepEqual((await page.evaluate<{ unlabeled: string[] }>(A11Y_CHECKS)).unlabeled, [], 'every field of the Enroll dialog has a label');
  assert.equal(await dialog.getByLabel('Password').getAttribute('type'), 'password', 'the password is masked');
  await dialog.locator('button[type="submit"]').click();
  await dialog.waitFor({ state: 'detached' });
  const typed = await getHost(ui.url, 'found-2');
  assert.equal(typed.spec.bmc?.address, TYPED);
  assert.equal(typed.spec.bmc.credentialsName, 'found-2-bmc-secret');
  await waitUntil('no discovered host left', async () => (await tileNames(page)).length === 0 && (await chip.textContent())?.includes('0') === true, 15_000);
  assert.equal((await page.content()).includes(TYPED_PASSWORD), false, 'the typed password is not on the page');
  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
});
