/**
 * The status page's actions and live connection in a real browser against a real agent with
 * `management.token` set: an action without the token is refused (401 shown in the dialog),
 * with the token (entered once, kept for the tab) it works; a wrong token is refused; the
 * provision dialog applies an image; and after the agent restarts on the same port and state
 * directory the page reconnects by itself and keeps updating without a reload.
 */
import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, TEST_TOKEN, browserSkipReason, freePort, launchBrowser, scratch, startUiAgent } from './web-ui-harness.js';
import { getHost, listHosts, putSpec, waitUntil } from './web-ui-helpers.js';

const skip = browserSkipReason();

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
}

/** Clicks a host-page action and then the dialog's confirm button (same label). */
async function confirmAction(page: Page, label: string): Promise<void> {
  await page.locator('.actions').getByRole('button', { name: label, exact: true }).click();
  await page.locator('dialog[open]').waitFor();
  await page.locator('dialog[open] button[type="submit"]').click();
}

test('status page actions and reconnect in a real browser', { skip: skip ?? false, timeout: 240_000 }, async (t) => {
  const dir = await scratch('ui-actions');
  const ui = await startUiAgent(dir, { port: await freePort(), token: true });
  t.after(async () => {
    await ui.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const browser = await launchBrowser();
  t.after(() => browser.close());
  await mkdir(ARTIFACTS, { recursive: true });
  const page = await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => { pageErrors.push(error.message); });
  t.after(() => {
    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  });
  await waitUntil('the demo rack settled', async () => {
    const hosts = await listHosts(ui.url);
    return hosts.find((x) => x.metadata.name === 'demo-provisioned')?.status.poweredOn === true
      && hosts.find((x) => x.metadata.name === 'demo-available')?.status.provisioning.state === 'available';
  });

  await t.test('power off without the token is refused and the dialog says why', async () => {
    await page.goto(`${ui.url}/hosts/demo-provisioned`);
    await page.locator('.page-head [data-testid="power"]').filter({ hasText: 'On' }).waitFor();
    assert.equal(await page.locator('#token-button').textContent(), 'Set management token');
    await confirmAction(page, 'Power off');
    const error = page.locator('dialog[open] .dialog-error');
    await error.filter({ hasText: '401' }).waitFor();
    assert.match(await error.textContent() ?? '', /Refused \(401 Unauthorized\): missing "Authorization: Bearer <token>" header/);
    assert.equal(await error.getAttribute('role'), 'alert');
    assert.equal(await page.locator('dialog[open]').getByRole('button', { name: 'Set token…' }).isVisible(), true);
    assert.equal((await getHost(ui.url, 'demo-provisioned')).spec.online, true, 'nothing changed');
    await shot(page, 'dialog-401.png');
  });

  await t.test('with the token entered once, the same action works and the page shows the host off', async () => {
    await page.locator('dialog[open]').getByRole('button', { name: 'Set token…' }).click();
    await page.locator('#token-input').fill(TEST_TOKEN);
    await page.locator('dialog[open] button[type="submit"]').filter({ hasText: 'Save' }).click();
    assert.equal(await page.locator('dialog[open]').count(), 1, 'back in the action dialog');
    await page.locator('dialog[open] button[type="submit"]').click();
    await page.locator('dialog[open]').waitFor({ state: 'detached' });
    await page.locator('.page-head [data-testid="power"]').filter({ hasText: 'Off' }).waitFor({ timeout: 30_000 });
    const host = await getHost(ui.url, 'demo-provisioned');
    assert.equal(host.spec.online, false);
    assert.equal(host.status.poweredOn, false);
    assert.equal(await page.locator('#token-button').textContent(), 'Management token ✓');
    assert.equal(await page.evaluate<string | null>('sessionStorage.getItem("rackside.managementToken")'), TEST_TOKEN);
    await page.reload();
    await confirmAction(page, 'Power on');
    await page.locator('dialog[open]').waitFor({ state: 'detached' });
    await page.locator('.page-head [data-testid="power"]').filter({ hasText: 'On' }).waitFor({ timeout: 30_000 });
  });

  await t.test('a wrong token is refused', async () => {
    await page.locator('#token-button').click();
    await page.locator('#token-input').fill('not-the-right-token-at-all');
    await page.locator('dialog[open] button[type="submit"]').click();
    await confirmAction(page, 'Reboot');
    await page.locator('dialog[open] .dialog-error').filter({ hasText: 'invalid bearer token' }).waitFor();
    await page.keyboard.press('Escape');
    await page.locator('dialog[open]').waitFor({ state: 'detached' });
    assert.equal(await page.evaluate<string | null>('document.activeElement && document.activeElement.textContent'), 'Reboot', 'focus returns to the opener');
    await page.locator('#token-button').click();
    await page.locator('#token-input').fill(TEST_TOKEN);
    await page.locator('dialog[open] button[type="submit"]').click();
  });

  await t.test('the provision dialog applies an image and the host reaches provisioned', async () => {
    await page.goto(`${ui.url}/hosts/demo-available`);
    await page.locator('.actions').getByRole('button', { name: 'Provision…' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByLabel('Image URL').fill('http://images.example/ubuntu-24.04.qcow2');
    await dialog.getByLabel('Checksum (value or URL)').fill('http://images.example/ubuntu-24.04.qcow2.sha256sum');
    await dialog.getByLabel('Checksum type').selectOption('sha256');
    assert.equal(await dialog.getByRole('button', { name: 'Set token…' }).isVisible(), false, 'offered only after a 401');
    await shot(page, 'dialog-provision.png');
    await dialog.locator('button[type="submit"]').click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('.page-head [data-testid="state"]').filter({ hasText: 'provisioned' }).waitFor({ timeout: 30_000 });
    const host = await getHost(ui.url, 'demo-available');
    assert.deepEqual(host.spec.image, { url: 'http://images.example/ubuntu-24.04.qcow2', checksum: 'http://images.example/ubuntu-24.04.qcow2.sha256sum', checksumType: 'sha256' });
    assert.equal(host.status.provisioning.state, 'provisioned');
  });

  await t.test('the page reconnects after the agent restarts and keeps updating live', async () => {
    await page.goto(`${ui.url}/`);
    await page.locator('#live-status[data-state="live"]').waitFor();
    await page.evaluate('window.__sameDocument = true');
    await ui.stop();
    await page.locator('#live-status:is([data-state="reconnecting"], [data-state="offline"])').waitFor({ timeout: 15_000 });
    assert.match(await page.locator('#live-status').textContent() ?? '', /Reconnecting|unreachable/);
    await shot(page, 'rack-reconnecting.png');
    await ui.start();
    await page.locator('#live-status[data-state="live"]').waitFor({ timeout: 30_000 });
    // A change after the restart reaches the open page through the new stream.
    await putSpec(ui.url, 'demo-provisioned', ({ image: _image, ...spec }) => spec, TEST_TOKEN);
    await page.locator('li.tile[data-host="demo-provisioned"][data-state="available"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate('window.__sameDocument === true'), true, 'no reload happened');
    assert.equal(await page.locator('#live-status .live-text').textContent(), 'Live');
    await shot(page, 'rack-reconnected.png');
  });
});
