/**
 * BMCEventSubscription (issue 27 item 7): `apply` accepts the kind with upstream's webhook rules,
 * the store keeps it, and the subscription reconciler creates it on the BMC through the
 * provisioner once the host is registered (status.subscriptionID / status.error), and removes it
 * before the object goes on delete. Driven with the fixture provisioner, which records calls.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { HostService } from '../../../agent/host/service.js';
import { Reconciler } from '../../../agent/host/reconciler.js';
import { BMCEventSubscriptionReconciler, headersOf, hostRegistered } from '../../../agent/host/bmc-event-subscriptions.js';
import { decodeManifest } from '../../../agent/host/validation.js';
import { isApiError } from '../../../agent/errors.js';
import { Fixture } from '../../../agent/provisioner/fixture.js';
import { createMemoryStore } from '../../../agent/store/index.js';
import { hostManifests } from '../../helpers/host-harness.js';

function subscription(name: string, spec: Record<string, unknown>, namespace = 'metal3'): Record<string, unknown> {
  return { apiVersion: 'metal3.io/v1alpha1', kind: 'BMCEventSubscription', metadata: { name, namespace }, spec };
}

function fieldOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isApiError(error)) return error.message;
    throw error;
  }
  return 'accepted';
}

test('admission follows upstream: hostName and an absolute URL destination required, headers Secret in the same namespace', () => {
  const ok = decodeManifest(subscription('s', { hostName: 'h', destination: 'https://events.example/hook', context: 'ctx', httpHeadersRef: { name: 'hdr' } }));
  assert.ok(ok.kind === 'BMCEventSubscription');
  assert.deepEqual(ok.subscription.spec, {
    hostName: 'h', destination: 'https://events.example/hook', context: 'ctx', httpHeadersRef: { name: 'hdr', namespace: 'metal3' },
  });
  assert.match(fieldOf(() => decodeManifest(subscription('s', { destination: 'https://e/x' }))), /^spec\.hostName: required/);
  assert.match(fieldOf(() => decodeManifest(subscription('s', { hostName: 'h' }))), /^spec\.destination: required/);
  assert.match(fieldOf(() => decodeManifest(subscription('s', { hostName: 'h', destination: 'not a url' }))), /^spec\.destination: must be an absolute URL/);
  assert.match(fieldOf(() => decodeManifest(subscription('s', { hostName: 'h', destination: 'https://events.example' }))), /^spec\.destination: hostname-only destination must have a trailing slash/);
  assert.match(fieldOf(() => decodeManifest(subscription('s', { hostName: 'h', destination: 'ftp://e/x' }))), /^spec\.destination: must be an http or https URL/);
  assert.match(fieldOf(() => decodeManifest(subscription('s', { hostName: 'h', destination: 'https://e/', httpHeadersRef: { name: 'x', namespace: 'other' } }))), /^spec\.httpHeadersRef\.namespace: /);
  assert.match(fieldOf(() => decodeManifest(subscription('s', { hostName: 'h', destination: 'https://e/', bogus: 1 }))), /^spec\.bogus: /);
});

test('headers: one single-entry map per Secret key, decoded, sorted', () => {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  assert.deepEqual(headersOf({ 'X-B': b64('2'), Authorization: b64('Bearer t') }), [{ Authorization: 'Bearer t' }, { 'X-B': '2' }]);
});

function setup(): { service: HostService; fixture: Fixture; subs: BMCEventSubscriptionReconciler; registerHost: (name: string) => Promise<void> } {
  const store = createMemoryStore();
  const fixture = new Fixture({ delayScale: 0 });
  const reconciler = new Reconciler({ store, factory: fixture, logger: pino({ level: 'silent' }), concurrency: 1, timeScale: 0, maxProvisioningRetries: 5, random: () => 0 });
  const service = new HostService({ store, info: { version: 't', agentId: 't', provisioner: 'fixture', startedAt: '' } });
  const subs = new BMCEventSubscriptionReconciler({ store, factory: fixture, logger: pino({ level: 'silent' }), retryMs: 50 });
  const registerHost = async (name: string): Promise<void> => {
    await service.apply(hostManifests(name, { online: false }, { 'inspect.metal3.io': 'disabled' }));
    for (let i = 0; i < 40 && !hostRegistered(await service.getHost(name)); i++) await reconciler.reconcileOnce(name);
    assert.ok(hostRegistered(await service.getHost(name)), `${name} registered`);
  };
  return { service, fixture, subs, registerHost };
}

test('a subscription on a registered host is created on the BMC once, with its headers; status records the id', async () => {
  const { service, fixture, subs, registerHost } = setup();
  await registerHost('h0');
  await subs.start();
  const applied = await service.apply([
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hdr', namespace: 'metal3' }, data: { Authorization: Buffer.from('Bearer t').toString('base64') } },
    subscription('s0', { hostName: 'h0', destination: 'https://events.example/hook', context: 'c', httpHeadersRef: { name: 'hdr' } }),
  ]);
  assert.deepEqual(applied.map((o) => `${o.kind}/${o.action}`), ['Secret/created', 'BMCEventSubscription/created']);
  await subs.idle();
  const calls = fixture.callsFor('h0', 'addBMCEventSubscriptionForNode');
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0]?.args.httpHeaders, [{ Authorization: 'Bearer t' }]);
  const stored = await service.getBMCEventSubscription('metal3', 's0');
  assert.equal(stored.status.subscriptionID, 'fixture-sub-metal3-s0');
  assert.equal(stored.status.error, undefined);
  assert.deepEqual(stored.metadata.finalizers, ['bmceventsubscription.metal3.io']);
  assert.equal((await service.listBMCEventSubscriptions()).length, 1);
  // Re-applying the same spec is unchanged; a new spec is refused (upstream: immutable).
  assert.equal((await service.apply([subscription('s0', { hostName: 'h0', destination: 'https://events.example/hook', context: 'c', httpHeadersRef: { name: 'hdr' } })]))[0]?.action, 'unchanged');
  await assert.rejects(service.apply([subscription('s0', { hostName: 'h0', destination: 'https://other.example/hook' })]), /cannot be changed/);
  await subs.idle();
  assert.equal(fixture.callsFor('h0', 'addBMCEventSubscriptionForNode').length, 1, 'no second create');

  // Delete: removed on the BMC first, then the object goes.
  const marked = await service.deleteBMCEventSubscription('metal3', 's0');
  assert.ok(marked.metadata.deletionTimestamp !== undefined);
  await subs.idle();
  const removes = fixture.callsFor('h0', 'removeBMCEventSubscriptionForNode');
  assert.equal(removes.length, 1);
  assert.equal((removes[0]?.args.subscription as { status: { subscriptionID?: string } }).status.subscriptionID, 'fixture-sub-metal3-s0');
  assert.deepEqual(await service.listBMCEventSubscriptions(), []);
  await subs.stop();
});

test('a missing host is recorded in status.error; the subscription is created once the host registers', async () => {
  const { service, fixture, subs, registerHost } = setup();
  await subs.start();
  await service.apply([subscription('s1', { hostName: 'h1', destination: 'http://127.0.0.1:9/e' })]);
  await subs.idle();
  assert.match((await service.getBMCEventSubscription('metal3', 's1')).status.error ?? '', /BareMetalHost "h1" not found/);
  await registerHost('h1');
  for (let i = 0; i < 100 && (await service.getBMCEventSubscription('metal3', 's1')).status.subscriptionID === undefined; i++) {
    await new Promise((r) => setTimeout(r, 20));
    await subs.idle();
  }
  const stored = await service.getBMCEventSubscription('metal3', 's1');
  assert.equal(stored.status.subscriptionID, 'fixture-sub-metal3-s1');
  assert.equal(stored.status.error, undefined);
  assert.equal(fixture.callsFor('h1', 'addBMCEventSubscriptionForNode').length, 1);
  await subs.stop();
});

test('a BMC refusal is kept in status.error and retried; a failed removal keeps the object until it succeeds', async () => {
  const { service, fixture, subs, registerHost } = setup();
  await registerHost('h2');
  fixture.failNext('addBMCEventSubscriptionForNode', 'EventService disabled', 'h2');
  await subs.start();
  await service.apply([subscription('s2', { hostName: 'h2', destination: 'https://e.example/x' })]);
  await subs.idle();
  assert.match((await service.getBMCEventSubscription('metal3', 's2')).status.error ?? '', /EventService disabled/);
  for (let i = 0; i < 100 && (await service.getBMCEventSubscription('metal3', 's2')).status.subscriptionID === undefined; i++) {
    await new Promise((r) => setTimeout(r, 20));
    await subs.idle();
  }
  assert.equal((await service.getBMCEventSubscription('metal3', 's2')).status.subscriptionID, 'fixture-sub-metal3-s2');

  fixture.failNext('removeBMCEventSubscriptionForNode', 'BMC busy', 'h2');
  await service.deleteBMCEventSubscription('metal3', 's2');
  await subs.idle();
  const kept = await service.getBMCEventSubscription('metal3', 's2');
  assert.match(kept.status.error ?? '', /BMC busy/);
  for (let i = 0; i < 100 && (await service.listBMCEventSubscriptions()).length > 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
    await subs.idle();
  }
  assert.deepEqual(await service.listBMCEventSubscriptions(), []);
  assert.equal(fixture.callsFor('h2', 'removeBMCEventSubscriptionForNode').length, 2);
  await subs.stop();
});
