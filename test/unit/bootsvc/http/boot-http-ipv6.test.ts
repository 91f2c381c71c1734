/**
 * Boot HTTP on a dual-stack listener with `publicUrl6`: a script requested over IPv6 names the
 * IPv6 base URL (a bracketed literal), one requested over IPv4 the IPv4 base URL (loopback);
 * the ramdisk's callback URL (`rackside.url=`) follows the same family.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { startBootHttpServer } from '../../../../bootsvc/http/boot-http-server.js';
import type { BootLookup } from '../../../../bootsvc/boot-lookup.js';

const MAC = '52:54:00:00:06:01';
const plans: BootLookup = {
  target: ({ mac }) => Promise.resolve(mac === MAC ? { host: 'node-6', plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://agent.invalid' } } : undefined),
};
const MAC2 = '52:54:00:00:06:02';
/** The agent's own ramdisk default: the callback URL is boot HTTP's IPv4 public URL. */
const agentPlans: BootLookup = {
  target: ({ mac }) => Promise.resolve(mac === MAC2 ? { host: 'node-7', plan: { kind: 'ramdisk', purpose: 'ramdisk', kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: 'http://127.0.0.1:8081', token: 't0k' } } : undefined),
};

function get(host: string, port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ host, port, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { resolve(Buffer.concat(chunks).toString()); });
    }).on('error', reject).end();
  });
}

test('scripts name the base URL of the family they were requested over', async (t) => {
  const server = await startBootHttpServer({ host: '::', port: 0, publicUrl: 'http://127.0.0.1:8081', publicUrl6: 'http://[fd00:1::1]:8081', plans });
  t.after(() => server.stop());
  const path = `/boot/${MAC.replace(/:/g, '-')}.ipxe`;
  const over6 = await get('::1', server.port, path);
  const over4 = await get('127.0.0.1', server.port, path);
  assert.match(over6, /^kernel --name vmlinuz http:\/\/\[fd00:1::1\]:8081\/ramdisk\/vmlinuz /m, over6);
  assert.match(over4, /^kernel --name vmlinuz http:\/\/127\.0\.0\.1:8081\/ramdisk\/vmlinuz /m, over4);
  assert.ok(!over6.includes('127.0.0.1') && !over4.includes('fd00:1::1'));
});

test('the ramdisk callback URL is the one of the family the script was requested over', async (t) => {
  const server = await startBootHttpServer({ host: '::', port: 0, publicUrl: 'http://127.0.0.1:8081', publicUrl6: 'http://[fd00:1::1]:8081', plans: agentPlans });
  t.after(() => server.stop());
  const path = `/boot/${MAC2.replace(/:/g, '-')}.ipxe`;
  const over6 = await get('::1', server.port, path);
  const over4 = await get('127.0.0.1', server.port, path);
  assert.match(over6, / rackside\.url=http:\/\/\[fd00:1::1\]:8081 rackside\.token=t0k /, over6);
  assert.match(over4, / rackside\.url=http:\/\/127\.0\.0\.1:8081 rackside\.token=t0k /, over4);
});
