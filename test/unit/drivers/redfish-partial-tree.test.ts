// Redfish BMCs as they are in the field, served on loopback from test/fixtures/redfish/partial/:
// a partial tree (a Memory collection answering 404, a Processors collection answering 501 or
// 405, a Memory member that is gone) keeps the rest of the inventory and names each skipped
// part in `warnings`; disks listed only under SimpleStorage are read when Storage is absent or
// empty; and error answers keep the BMC's words (ExtendedInfo Message, MessageId, Resolution)
// whether ExtendedInfo sits under `error` or at the top level.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseBmcAddress } from '../../../drivers/bmc-address.js';
import type { InventoryControl } from '../../../drivers/capabilities.js';
import { BmcErrorCode, isBmcError } from '../../../drivers/errors.js';
import { RedfishClient } from '../../../drivers/redfish/client.js';
import { statusError } from '../../../drivers/redfish/http-errors.js';
import { createRedfishDriver } from '../../../drivers/redfish/redfish-driver.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../test/fixtures/redfish/partial');
const mockup = JSON.parse(readFileSync(resolve(FIXTURES, 'mockup.json'), 'utf8')) as Record<string, unknown>;
const errors = JSON.parse(readFileSync(resolve(FIXTURES, 'errors.json'), 'utf8')) as Record<string, unknown>;

/** Answers overriding the mockup for one path: a status and an optional body. */
const overrides = new Map<string, { status: number; body?: unknown }>();
let server: Server;
let base = '';

before(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]?.replace(/\/$/, '') ?? '/';
    const send = (status: number, body: unknown): void => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)); };
    const override = overrides.get(path);
    if (override !== undefined) { send(override.status, override.body ?? { error: { code: 'Base.1.0.GeneralError', message: `HTTP ${override.status}` } }); return; }
    const body = mockup[path];
    if (body === undefined) {
      send(404, { error: { code: 'Base.1.0.GeneralError', message: 'A general error has occurred.', '@Message.ExtendedInfo': [{ MessageId: 'Base.1.0.ResourceMissingAtURI', Message: `The resource at the URI ${path} was not found.` }] } });
      return;
    }
    send(200, body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
});

async function inventoryOf(system: string): Promise<Awaited<ReturnType<InventoryControl['getInventory']>>> {
  const driver = createRedfishDriver(parseBmcAddress(`redfish+http://${base}/redfish/v1/Systems/${system}`), { username: 'root', password: 'calvin' },
    { auth: 'basic', retries: 0 });
  try {
    assert.ok(driver.inventory !== undefined);
    return await driver.inventory.getInventory();
  } finally {
    await driver.close?.();
  }
}

test('a Memory collection answering 404 is skipped with a warning; SimpleStorage-only disks are read', async () => {
  overrides.clear();
  const inv = await inventoryOf('1');
  assert.deepEqual(inv.warnings, ['Memory collection /redfish/v1/Systems/1/Memory answered HTTP 404: skipped, the rest of the inventory is kept']);
  assert.equal(inv.system.serialNumber, 'PARTIAL-1');
  assert.equal(inv.processors.length, 2);
  assert.equal(inv.memoryMebibytes, 64 * 1024, 'MemorySummary stands in for the missing collection');
  assert.deepEqual(inv.nics.map((n) => n.macAddress), ['52:54:00:aa:01:01']);
  assert.deepEqual(inv.drives, [
    { id: 'SATA Bay 1', model: 'ST4000NM', serialNumber: undefined, sizeBytes: 4000787030016, mediaType: undefined, protocol: undefined },
    { id: 'SATA Bay 2', model: 'ST4000NM', serialNumber: undefined, sizeBytes: 4000787030016, mediaType: undefined, protocol: undefined },
  ]);
});

test('an empty Storage collection falls back to SimpleStorage; 501/405 collections and a gone member are skipped by name', async () => {
  overrides.clear();
  overrides.set('/redfish/v1/Systems/2/Processors', { status: 501 });
  overrides.set('/redfish/v1/Systems/2/EthernetInterfaces', { status: 405 });
  const inv = await inventoryOf('2');
  assert.deepEqual(inv.warnings, [
    'Processors collection /redfish/v1/Systems/2/Processors answered HTTP 501: skipped, the rest of the inventory is kept',
    'Memory member /redfish/v1/Systems/2/Memory/DIMM2 answered HTTP 404: skipped, the rest of the inventory is kept',
    'EthernetInterfaces collection /redfish/v1/Systems/2/EthernetInterfaces answered HTTP 405: skipped, the rest of the inventory is kept',
  ]);
  assert.deepEqual(inv.processors, []);
  assert.equal(inv.memoryMebibytes, 32768);
  assert.deepEqual(inv.nics, []);
  assert.deepEqual(inv.drives.map((d) => [d.id, d.model, d.sizeBytes]), [['SATA Bay 1', 'MZ7LH960', 960197124096]]);
});

test('a complete tree has no warnings field; any other failure still fails the inventory', async () => {
  overrides.clear();
  overrides.set('/redfish/v1/Systems/2/Memory/DIMM2', { status: 200, body: { '@odata.id': '/redfish/v1/Systems/2/Memory/DIMM2', Id: 'DIMM2', CapacityMiB: 32768 } });
  const inv = await inventoryOf('2');
  assert.equal(Object.hasOwn(inv, 'warnings'), false);
  assert.equal(inv.memoryMebibytes, 65536);
  overrides.set('/redfish/v1/Systems/2/Memory', { status: 500 });
  await assert.rejects(inventoryOf('2'), (err: Error) => isBmcError(err, BmcErrorCode.protocol) && /HTTP 500/.test(err.message));
  overrides.clear();
});

const said: Record<string, RegExp> = {
  'code-with-top-level-extended-info':
    /\(HTTP 400: Cannot download virtual media: got error 404 \(Base\.1\.0\.GeneralError; Resolution: Check that the image URL is reachable from the BMC and retry\.\)\)$/,
  'top-level-extended-info-only':
    /\(HTTP 400: The value Floppy for the property BootSourceOverrideTarget is not in the list of acceptable values\. \(Base\.1\.4\.PropertyValueNotInList; Resolution: Choose a value/,
  'error-extended-info-with-resolution':
    /\(HTTP 400: The action InsertMedia was submitted with the invalid parameter Foo\. \(Base\.1\.8\.ActionParameterUnknown; Resolution: Correct the invalid parameter and resubmit the request if the operation failed\.\); The requested operation cannot be completed because the Virtual Media is already attached\. \(IDRAC\.2\.8\.VRM0012\)\)$/,
};

for (const [name, pattern] of Object.entries(said)) {
  test(`a 400 keeps the BMC's words: ${name}`, async () => {
    const request = { address: 'redfish://bmc-7', method: 'POST', path: '/redfish/v1/Managers/1/VirtualMedia/CD1/Actions/VirtualMedia.InsertMedia' };
    const err = statusError(400, request, errors[name]);
    assert.equal(err.code, BmcErrorCode.protocol);
    assert.match(err.message, pattern);
    // And end to end, from the wire.
    overrides.clear();
    overrides.set('/redfish/v1/Systems/1', { status: 400, body: errors[name] });
    const client = new RedfishClient({ endpoint: `http://${base}`, address: `redfish+http://${base}/redfish/v1/Systems/1`, credentials: { username: 'root', password: 'calvin' }, auth: 'basic', retries: 0 });
    try {
      await assert.rejects(client.get('/redfish/v1/Systems/1'), (e: Error) => isBmcError(e, BmcErrorCode.protocol) && pattern.test(e.message));
    } finally {
      await client.close();
      overrides.clear();
    }
  });
}
