/**
 * Fuzzes the Redfish resource decoders (drivers/redfish/resources*.ts, json.ts) and the pure logic
 * fed by them (BIOS change planning against a decoded registry, task states, firmware component
 * names, vendor detection) with structure-aware mutations of the vendor mockups and odd bodies.
 * Every decoder must return or throw a BmcError with code RACKSIDE_ERR_BMC_PROTOCOL — never a
 * TypeError, RangeError or anything else; `describeRedfishError` never throws; BIOS planning
 * never throws whatever the registry said.
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=120000 node --test dist/test/fuzz/redfish-decoders.test.js`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BmcError, BmcErrorCode } from '../../drivers/errors.js';
import { pendingBiosValues, planBiosChanges } from '../../drivers/redfish/bios-settings.js';
import { decodeCollection, type DecodeContext } from '../../drivers/redfish/json.js';
import { vendorOf } from '../../drivers/redfish/redfish-driver.js';
import {
  decodeActionInfoAllowableValues, decodeAttributeRegistry, decodeBios, decodeComputerSystem, decodeDrive, decodeEthernetInterface,
  decodeEventDestination, decodeManager, decodeMemoryCapacityMib, decodeProcessor, decodeRegistryFile, decodeSecureBoot, decodeServiceRoot,
  decodeSoftwareInventory, decodeStorage, decodeTask, decodeVirtualMedia, decodeVolume, describeRedfishError, isTaskBody,
} from '../../drivers/redfish/resources.js';
import { firmwareComponentOf } from '../../drivers/redfish/services.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { mutateJson, showJson, type Json } from './mutate-json.js';
import { BODIES, REDFISH_KEYS, REDFISH_STRINGS } from './redfish-mockups.js';

const INPUTS = fuzzInputs(8000);
const ctx: DecodeContext = { address: 'redfish://fuzz-bmc', uri: '/redfish/v1/Fuzz/1' };

const DECODERS: Readonly<Record<string, (body: unknown) => unknown>> = {
  collection: (b) => decodeCollection(b, ctx),
  serviceRoot: (b) => decodeServiceRoot(b, ctx),
  system: (b) => decodeComputerSystem(b, ctx),
  manager: (b) => decodeManager(b, ctx),
  virtualMedia: (b) => decodeVirtualMedia(b, ctx),
  secureBoot: (b) => decodeSecureBoot(b, ctx),
  actionInfo: (b) => decodeActionInfoAllowableValues(b, 'ResetType', ctx),
  bios: (b) => decodeBios(b, ctx),
  registry: (b) => decodeAttributeRegistry(b, ctx),
  registryFile: (b) => decodeRegistryFile(b, ctx),
  storage: (b) => decodeStorage(b, ctx),
  drive: (b) => decodeDrive(b, ctx),
  volume: (b) => decodeVolume(b, ctx),
  processor: (b) => decodeProcessor(b, ctx),
  memory: (b) => decodeMemoryCapacityMib(b, ctx),
  ethernet: (b) => decodeEthernetInterface(b, ctx),
  task: (b) => decodeTask(b, ctx),
  softwareInventory: (b) => decodeSoftwareInventory(b, ctx),
  eventDestination: (b) => decodeEventDestination(b, ctx),
};

/** Runs `decode`; a BmcError PROTOCOL is a refusal, anything else thrown is a finding. */
function decoded<T>(name: string, decode: () => T): T | undefined {
  try {
    return decode();
  } catch (err) {
    if (err instanceof BmcError && err.code === BmcErrorCode.protocol) return undefined;
    throw new Error(`${name} threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)} instead of a BmcError PROTOCOL`, { cause: err });
  }
}

function check(body: Json): string {
  let accepted = 0;
  for (const [name, decode] of Object.entries(DECODERS)) if (decoded(name, () => decode(body)) !== undefined) accepted++;
  const described = describeRedfishError(body);
  assert.ok(described === undefined || (typeof described === 'string' && described.length <= 500), 'error description is short text');
  assert.equal(typeof isTaskBody(body), 'boolean');
  const task = decoded('task', () => decodeTask(body, ctx));
  if (task !== undefined) assert.ok(['pending', 'running', 'completed', 'failed', 'cancelled'].includes(task.state), `task state ${task.state}`);
  const item = decoded('softwareInventory', () => decodeSoftwareInventory(body, ctx));
  if (item !== undefined) assert.equal(typeof firmwareComponentOf(item), 'string');
  const root = decoded('serviceRoot', () => decodeServiceRoot(body, ctx));
  const manager = decoded('manager', () => decodeManager(body, ctx));
  if (root !== undefined) vendorOf(root, manager, 'Contoso');
  // BIOS planning with whatever registry and values this body decodes to.
  const schema = decoded('registry', () => decodeAttributeRegistry(body, ctx)) ?? {};
  const bios = decoded('bios', () => decodeBios(body, ctx));
  const current = bios?.attributes ?? {};
  const names = [...Object.keys(schema), ...Object.keys(current)].slice(0, 50);
  const changes = Object.fromEntries(names.map((n, i) => [n, i % 3 === 0 ? 'Enabled' : i % 3 === 1 ? String(i) : i % 2 === 0]));
  const plan = planBiosChanges(changes, current, pendingBiosValues(current, {}), schema);
  assert.ok(Array.isArray(plan.problems));
  return accepted > 0 ? 'decoded' : 'refused';
}

test(`fuzz redfish decoders: ${INPUTS} mutated bodies through every decoder`, async (t) => {
  const options = { seeds: BODIES, keys: REDFISH_KEYS, strings: REDFISH_STRINGS };
  const report = await runFuzz<Json>({
    name: 'redfish-decoders',
    seed: fuzzSeed(0x4ed715),
    inputs: INPUTS,
    generate: (dice, i) => mutateJson(dice, BODIES[i % BODIES.length] ?? null, options),
    check,
    show: (body) => showJson(body),
  });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  assert.ok((report.outcomes.decoded ?? 0) > 0 && (report.outcomes.refused ?? 0) > 0, 'both outcomes exercised');
});
