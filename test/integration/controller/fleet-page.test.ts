/**
 * The fleet page in Debian's Chromium (playwright-core, test/integration/web-ui-harness.ts)
 * against an in-process controller on a private PostgreSQL 15: the rack grid with an offline
 * rack flagged and a link to a rack's status page, a host search through the page's form, a host
 * in error, and a queued command's progress (queued → delivered → done) on reloads. Neither the
 * rendered text nor the HTML holds a rack token or the operator token.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { addRack } from '../../../controller/racks.js';
import { browserSkipReason, launchBrowser } from '../web-ui-harness.js';
import { controllerFor, hostSummary, postPush, push } from './fleet-fixtures.js';

test('the fleet page in Chromium: racks, search, an error host, a command\'s progress, no secret', { timeout: 300_000 }, async (t) => {
  const skip = browserSkipReason();
  if (skip !== undefined) {
    t.skip(skip);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'rackside-fleet-page-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const operatorToken = 'operator-token-0123456789abcdef';
  await writeFile(join(dir, 'operator.token'), operatorToken);
  const c = await controllerFor(t, { operatorTokenFile: join(dir, 'operator.token') });
  if (c === undefined) return;
  const tokens = [await addRack(c.pool, 'rack1'), await addRack(c.pool, 'rack2')];
  await postPush(c.controller.url, tokens[0], push('rack1', 1, {
    statusUrl: 'http://rack1.example.net:8080/', hosts: [
      hostSummary('web-1', 3, { bootMACAddress: '52:54:00:aa:bb:01', serialNumber: 'SN-001', state: 'provisioned' }),
      hostSummary('db-1', 4, { state: 'inspecting', errorType: 'inspection error', errorMessage: 'disk sdb not found' }),
    ],
  }));
  const queued = await fetch(`${c.controller.url}/api/v1/commands`, {
    method: 'POST', headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ rack: 'rack1', kind: 'power-off', host: 'web-1' }),
  });
  assert.equal(queued.status, 201);
  const { id } = (await queued.json()) as { id: string };
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const page = await browser.context.newPage();
  const stateOnPage = async (): Promise<string> => {
    await page.goto(`${c.controller.url}/`);
    return (await page.locator(`tr[data-command="${id}"] td:nth-child(4)`).textContent()) ?? '';
  };
  assert.equal(await stateOnPage(), 'queued');
  assert.equal(await page.locator('section[data-rack="rack1"] .ok').textContent(), 'online');
  assert.equal(await page.locator('section[data-rack="rack2"] .bad').textContent(), 'offline');
  assert.equal(await page.locator('section[data-rack="rack1"] h3 a').getAttribute('href'), 'http://rack1.example.net:8080/');
  assert.match((await page.locator('body').innerText()), /db-1[\s\S]*disk sdb not found/, 'the host in error is listed');
  await page.fill('input[name="q"]', 'sn-001');
  await Promise.all([page.waitForURL(/\?q=sn-001/), page.click('form[role="search"] button')]);
  const results = await page.locator('h2:has-text("Search") + table tbody tr').allInnerTexts();
  assert.equal(results.length, 1);
  assert.match(results[0] ?? '', /rack1\s+default\/web-1\s+provisioned/);
  await postPush(c.controller.url, tokens[0], push('rack1', 2));
  assert.equal(await stateOnPage(), 'delivered');
  await postPush(c.controller.url, tokens[0], push('rack1', 3, { commandResults: [{ id, outcome: 'done', message: 'power-off requested', finishedAt: new Date().toISOString() }] }));
  assert.equal(await stateOnPage(), 'done');
  const html = await page.content();
  const text = await page.locator('body').innerText();
  for (const secret of [...tokens, operatorToken]) {
    assert.ok(!html.includes(secret) && !text.includes(secret), 'no token on the page');
  }
});
