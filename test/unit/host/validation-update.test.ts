import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkHostUpdate, decodeHost } from '../../../agent/host/validation.js';
import { ApiErrorCode, ConflictError } from '../../../agent/errors.js';
import type { BareMetalHost, OperationalStatus, ProvisioningState } from '../../../agent/host/types.js';
import { baseHost } from './validation-manifests.js';

/** A stored host in `state` (and `operationalStatus`), decoded from the base manifest. */
function stored(state: ProvisioningState, operationalStatus: OperationalStatus = 'OK'): BareMetalHost {
  const host = decodeHost(baseHost());
  host.status.provisioning.state = state;
  host.status.operationalStatus = operationalStatus;
  return host;
}

function edited(from: BareMetalHost, edit: (h: BareMetalHost) => void): BareMetalHost {
  const copy = structuredClone(from);
  edit(copy);
  return copy;
}

const cases: Record<string, { old: BareMetalHost; edit: (h: BareMetalHost) => void; conflict?: string; message?: RegExp }> = {
  'no change is fine': { old: stored('provisioned'), edit: () => undefined },
  'online and image may change any time': {
    old: stored('provisioned'),
    edit: (h) => { h.spec.online = false; h.spec.image = { url: 'http://x.example/b.qcow2', checksum: 'abc' }; },
  },
  'bootMACAddress case change is not a change': { old: stored('provisioned'), edit: (h) => { h.spec.bootMACAddress = '00:5C:52:31:3A:9C'; } },
  'bootMACAddress change is refused': { old: stored('available'), edit: (h) => { h.spec.bootMACAddress = '00:5c:52:31:3a:9d'; }, conflict: 'spec.bootMACAddress', message: /can not be changed once it is set/ },
  'bootMACAddress removal is refused': { old: stored('available'), edit: (h) => { delete h.spec.bootMACAddress; }, conflict: 'spec.bootMACAddress' },
  'bootMACAddress may be set when it was empty': {
    old: edited(stored('registering'), (h) => { delete h.spec.bootMACAddress; }),
    edit: (h) => { h.spec.bootMACAddress = '00:5c:52:31:3a:9d'; },
  },
  'bmc address change while registering': { old: stored('registering'), edit: (h) => { if (h.spec.bmc) h.spec.bmc.address = 'ipmi://10.0.0.9'; } },
  'bmc address change while detached': { old: stored('provisioned', 'detached'), edit: (h) => { if (h.spec.bmc) h.spec.bmc.address = 'ipmi://10.0.0.9'; } },
  'bmc address change while provisioned is refused': {
    old: stored('provisioned'),
    edit: (h) => { if (h.spec.bmc) h.spec.bmc.address = 'ipmi://10.0.0.9'; },
    conflict: 'spec.bmc.address',
    message: /registering or detached.*"provisioned"/,
  },
  'bmc address may be added to an unmanaged host': {
    old: edited(stored('unmanaged'), (h) => { delete h.spec.bmc; }),
    edit: (h) => { h.spec.bmc = { address: 'ipmi://10.0.0.9', credentialsName: 's' }; },
  },
  'credentialsName may change any time': { old: stored('provisioned'), edit: (h) => { if (h.spec.bmc) h.spec.bmc.credentialsName = 'rotated'; } },
  'externallyProvisioned enabled while available': { old: stored('available'), edit: (h) => { h.spec.externallyProvisioned = true; } },
  'externallyProvisioned enabled while ready (deprecated alias)': { old: stored('ready'), edit: (h) => { h.spec.externallyProvisioned = true; } },
  'externallyProvisioned enabled while inspecting is refused': {
    old: stored('inspecting'),
    edit: (h) => { h.spec.externallyProvisioned = true; },
    conflict: 'spec.externallyProvisioned',
    message: /available, currently "inspecting"/,
  },
  'externallyProvisioned kept on is fine': {
    old: edited(stored('externally provisioned'), (h) => { h.spec.externallyProvisioned = true; }),
    edit: (h) => { h.spec.online = false; },
  },
  'externallyProvisioned may be turned off': {
    old: edited(stored('externally provisioned'), (h) => { h.spec.externallyProvisioned = true; }),
    edit: (h) => { h.spec.externallyProvisioned = false; },
  },
  'namespace is immutable': { old: stored('available'), edit: (h) => { h.metadata.namespace = 'other'; }, conflict: 'metadata.namespace', message: /immutable/ },
  'name is immutable': { old: stored('available'), edit: (h) => { h.metadata.name = 'node-1'; }, conflict: 'metadata.name' },
};

for (const [name, c] of Object.entries(cases)) {
  test(`checkHostUpdate: ${name}`, () => {
    const next = edited(c.old, c.edit);
    if (c.conflict === undefined) {
      checkHostUpdate(c.old, next);
      return;
    }
    assert.throws(() => { checkHostUpdate(c.old, next); }, (err: unknown) => {
      assert.ok(err instanceof ConflictError);
      assert.equal(err.status, 409);
      assert.equal(err.code, ApiErrorCode.conflict);
      assert.equal(err.field, c.conflict);
      if (c.message !== undefined) assert.match(err.message, c.message);
      return true;
    });
  });
}

test('checkHostUpdate judges by the stored status, not the incoming one', () => {
  const old = stored('provisioned');
  const next = edited(old, (h) => {
    if (h.spec.bmc) h.spec.bmc.address = 'ipmi://10.0.0.9';
    h.status.provisioning.state = 'registering';
  });
  assert.throws(() => { checkHostUpdate(old, next); }, ConflictError);
});
