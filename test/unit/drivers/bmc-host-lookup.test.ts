// One resolver path for every driver (drivers/host-lookup.ts): a BMC host name that does not
// resolve (`.invalid`, RFC 6761) gives the same permanent error from the IPMI and the Redfish
// driver, naming the host and the resolver's answer — not `Port should be > 0 …` retried as
// transient forever. The resolver is injected: this machine's resolver forwards to a name
// server off the machine, and the tests send nothing beyond loopback.
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { after, test } from 'node:test';
import { parseBmcAddress } from '../../../drivers/bmc-address.js';
import {
  BmcErrorCode, BmcHostUnresolvedError, isBmcError, isPermanentBmcError, isTransientBmcError,
} from '../../../drivers/errors.js';
import { connectLookup, resolveBmcHost, type HostLookup } from '../../../drivers/host-lookup.js';
import { createIpmiDriver } from '../../../drivers/ipmi/ipmi-driver.js';
import { createRedfishDriver } from '../../../drivers/redfish/redfish-driver.js';
import { FakeLanplusBmc } from '../../lab/ipmi/fake-lanplus-bmc.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

/** A resolver that knows `names` and answers getaddrinfo's error for anything else; records every question. */
function fakeResolver(names: Readonly<Record<string, string>>, failure = 'ENOTFOUND'): HostLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = (hostname: string): Promise<readonly LookupAddress[]> => {
    asked.push(hostname);
    const address = names[hostname];
    if (address !== undefined) return Promise.resolve([{ address, family: 4 }]);
    return Promise.reject(Object.assign(new Error(`getaddrinfo ${failure} ${hostname}`), { code: failure, hostname, syscall: 'getaddrinfo' }));
  };
  return Object.assign(lookup, { asked });
}

const NAME = 'no-such-host.invalid';
const credentials = { username: 'admin', password: 'password' };

function isUnresolved(err: unknown, address: string): boolean {
  return err instanceof BmcHostUnresolvedError && isBmcError(err, BmcErrorCode.unreachable)
    && err.message === `BMC ${address}: cannot resolve the host name ${NAME} (ENOTFOUND: the resolver says no such name exists)`
    && err.hostname === NAME && err.resolverCode === 'ENOTFOUND' && err.permanent && isPermanentBmcError(err) && !isTransientBmcError(err);
}

test('IPMI: an unresolvable BMC name is a permanent error naming the host and ENOTFOUND', async () => {
  const lookup = fakeResolver({});
  const address = `ipmi://${NAME}:623`;
  const driver = createIpmiDriver(parseBmcAddress(address), credentials, { lookup, keepaliveMs: 0, attemptTimeoutMs: 100 });
  cleanups.push(() => driver.close());
  await assert.rejects(driver.power.getPowerState(), (err: Error) => isUnresolved(err, address) && !/Port should be/.test(err.message));
  assert.deepEqual(lookup.asked, [NAME]);
});

test('Redfish: the same name gives the same error through the same resolver', async () => {
  const lookup = fakeResolver({});
  const address = `redfish://${NAME}/redfish/v1/Systems/1`;
  const driver = createRedfishDriver(parseBmcAddress(address), credentials, { lookup, retries: 0, timeoutMs: 2000 });
  cleanups.push(async () => { await driver.close?.(); });
  assert.ok(driver.power !== undefined);
  await assert.rejects(driver.power.getPowerState(), (err: Error) => isUnresolved(err, address));
  assert.ok(lookup.asked.includes(NAME));
});

test('a resolver that cannot answer now (EAI_AGAIN) stays transient', async () => {
  await assert.rejects(resolveBmcHost(NAME, { address: `ipmi://${NAME}`, lookup: fakeResolver({}, 'EAI_AGAIN') }),
    (err: Error) => err instanceof BmcHostUnresolvedError && /EAI_AGAIN: the resolver could not answer now/.test(err.message)
      && !err.permanent && isTransientBmcError(err));
});

test('IP literals skip the resolver; a resolved name is what the IPMI socket connects to', async () => {
  const never: HostLookup = () => Promise.reject(new Error('must not be asked'));
  assert.deepEqual(await resolveBmcHost('127.0.0.1', { address: 'x', lookup: never }), { address: '127.0.0.1', family: 4 });
  assert.deepEqual(await resolveBmcHost('::1', { address: 'x', lookup: never }), { address: '::1', family: 6 });
  // A name with both families: the resolver's order, unless a family is preferred (IPMI prefers 4) or required.
  const both: HostLookup = () => Promise.resolve([{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]);
  assert.equal((await resolveBmcHost('bmc.test', { address: 'x', lookup: both })).address, '::1');
  assert.equal((await resolveBmcHost('bmc.test', { address: 'x', lookup: both, prefer: 4 })).address, '127.0.0.1');
  assert.equal((await resolveBmcHost('bmc.test', { address: 'x', lookup: both, family: 6, prefer: 4 })).address, '::1');
  const bmc = await FakeLanplusBmc.start();
  cleanups.push(() => bmc.stop());
  const lookup = fakeResolver({ 'bmc-7.rack.test': '127.0.0.1' });
  const driver = createIpmiDriver(parseBmcAddress(`ipmi://bmc-7.rack.test:${bmc.port}`), credentials, { lookup, keepaliveMs: 0, attemptTimeoutMs: 150 });
  cleanups.push(() => driver.close());
  bmc.power = true;
  assert.equal(await driver.power.getPowerState(), 'on');
  assert.deepEqual(lookup.asked, ['bmc-7.rack.test']);
});

test('connectLookup answers node:net in both forms (one address, or all)', async () => {
  const lookup = connectLookup({ address: 'x', lookup: fakeResolver({ 'bmc.test': '127.0.0.1' }) });
  const one = await new Promise<unknown[]>((resolve) => { lookup('bmc.test', {}, (...args) => { resolve(args); }); });
  assert.deepEqual(one, [null, '127.0.0.1', 4]);
  const all = await new Promise<unknown[]>((resolve) => { lookup('bmc.test', { all: true }, (...args) => { resolve(args); }); });
  assert.deepEqual(all, [null, [{ address: '127.0.0.1', family: 4 }]]);
  const failed = await new Promise<unknown[]>((resolve) => { lookup(NAME, {}, (...args) => { resolve(args); }); });
  assert.ok(failed[0] instanceof BmcHostUnresolvedError);
});
