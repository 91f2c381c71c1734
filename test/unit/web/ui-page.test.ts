/**
 * The status page's server side (agent/web/ui/status-page.ts, page-shell.ts): the document
 * shell (escaped title, no inline script or style), security headers on every response, the
 * browser bundle served from its directory without path escapes, and the API still answering
 * behind the page (`withStatusPage`).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import express from 'express';
import { createManagementApp } from '../../../agent/web/api.js';
import { CONTENT_SECURITY_POLICY, createStatusPage, escapeHtml, renderPageShell, statusReportHandler, withStatusPage } from '../../../agent/web/ui/index.js';
import { CLIENT_ENTRY } from '../../../agent/web/ui/page-shell.js';
import { FakeBackend, sampleHost } from '../../helpers/fake-backend.js';

test('escapeHtml escapes the five HTML metacharacters', () => {
  assert.equal(escapeHtml(`<img src=x onerror="alert(1)">&'`), '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;');
});

test('the shell: escaped title, landmarks, one external module script, no inline code', () => {
  const html = renderPageShell('host', '<script>alert(1)</script> · rackside');
  assert.match(html, /<title>&lt;script&gt;alert\(1\)&lt;\/script&gt; · rackside<\/title>/);
  assert.doesNotMatch(html, /<script>alert/);
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.equal(scripts.length, 1);
  assert.match(scripts[0]?.[1] ?? '', /type="module" src="\/ui\/js\/agent\/web\/ui\/client\/main\.mjs"/);
  assert.equal(scripts[0]?.[2], '', 'no inline script body');
  assert.doesNotMatch(html, /\sstyle=|<style|\son[a-z]+=/i, 'no inline style or handlers');
  for (const landmark of ['<header', '<main id="main"', 'role="status"', 'class="skip-link" href="#main"', 'lang="en"', 'name="viewport"']) assert.ok(html.includes(landmark), landmark);
  assert.match(html, /<body data-page="host">/);
});

test('the CSP is same-origin only with nothing relaxed', () => {
  assert.match(CONTENT_SECURITY_POLICY, /^default-src 'self'/);
  assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval|\*|https?:/);
  assert.match(CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
});

interface Served {
  url: string;
  close(): Promise<void>;
}

async function serve(app: express.Express): Promise<Served> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => { resolve(s); });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => { resolve(); });
    }),
  };
}

async function withBundle(run: (bundleDir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rackside-ui-bundle-'));
  try {
    const bundleDir = join(dir, 'ui');
    await mkdir(join(bundleDir, 'agent/web/ui/client'), { recursive: true });
    await writeFile(join(bundleDir, CLIENT_ENTRY), 'export {};\n');
    await writeFile(join(dir, 'secret.txt'), 'outside the bundle');
    await run(bundleDir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('the router: pages, stylesheet, bundle, security headers, fall-through to the API', async () => {
  await withBundle(async (bundleDir) => {
    const backend = new FakeBackend();
    backend.hosts.set('node-1', sampleHost('node-1'));
    const warnings: unknown[] = [];
    const app = withStatusPage(createManagementApp(backend, { requireTokenForMutations: false }), { bundleDir, logger: { warn: (...args: unknown[]) => { warnings.push(args); } } });
    const served = await serve(app);
    try {
      assert.deepEqual(warnings, [], 'the bundle exists: no warning');
      for (const path of ['/', '/hosts/node-1', '/hosts/missing-host']) {
        const response = await fetch(`${served.url}${path}`);
        assert.equal(response.status, 200, path);
        assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
        assert.equal(response.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
        assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
        assert.equal(response.headers.get('cache-control'), 'no-store');
      }
      const host = await (await fetch(`${served.url}/hosts/node-1`)).text();
      assert.match(host, /<title>node-1 · rackside<\/title>/);
      const bad = await fetch(`${served.url}/hosts/${encodeURIComponent('<img src=x>')}`);
      assert.equal(bad.status, 404);
      assert.doesNotMatch(await bad.text(), /<img/);
      const css = await fetch(`${served.url}/ui/app.css`);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
      assert.match(await css.text(), /prefers-color-scheme: dark/);
      const js = await fetch(`${served.url}/ui/js/${CLIENT_ENTRY}`);
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type') ?? '', /javascript/);
      assert.equal(js.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
      for (const path of ['/ui/js/../secret.txt', '/ui/js/%2e%2e/secret.txt', '/ui/js/nope.mjs', '/ui/nothing']) {
        const response = await fetch(`${served.url}${path}`);
        assert.equal(response.status, 404, path);
        assert.doesNotMatch(await response.text(), /outside the bundle/);
      }
      const svg = await fetch(`${served.url}/ui/favicon.svg`);
      assert.match(svg.headers.get('content-type') ?? '', /^image\/svg\+xml/);
      const hosts = await fetch(`${served.url}/api/v1/hosts`);
      assert.equal(hosts.status, 200);
      assert.equal(((await hosts.json()) as { items: unknown[] }).items.length, 1);
      const missing = await fetch(`${served.url}/api/v1/nothing`);
      assert.equal(missing.status, 404);
      assert.match(missing.headers.get('content-type') ?? '', /json/, 'unknown paths still get the API\'s JSON 404');
      const post = await fetch(`${served.url}/`, { method: 'POST' });
      assert.equal(post.status, 404);
    } finally {
      await served.close();
    }
  });
});

test('a missing bundle is reported once at start', () => {
  const warnings: string[] = [];
  createStatusPage({ bundleDir: join(tmpdir(), 'rackside-no-such-bundle'), logger: { warn: (_o: unknown, message?: string) => { warnings.push(message ?? ''); } } });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', /bundle missing/);
});

test('statusReportHandler serves the provider\'s report and passes failures on', async () => {
  const app = express();
  let fail = false;
  app.get('/status', statusReportHandler(() => {
    if (fail) throw new Error('provider broke');
    return { bootServices: { dhcp: { mode: 'proxy', healthy: true } } };
  }));
  app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => { res.status(500).json({ error: err.message }); });
  const served = await serve(app);
  try {
    assert.deepEqual(await (await fetch(`${served.url}/status`)).json(), { bootServices: { dhcp: { mode: 'proxy', healthy: true } } });
    fail = true;
    const broken = await fetch(`${served.url}/status`);
    assert.equal(broken.status, 500);
    assert.deepEqual(await broken.json(), { error: 'provider broke' });
  } finally {
    await served.close();
  }
});
