/**
 * Fuzzes the RMCP+/IPMI decoders on four levels, from seeds of the recorded ipmitool ↔ ipmi_sim
 * exchange (test/fuzz/ipmi-seeds.ts):
 * - datagrams: mutated whole datagrams through `decodeSessionPacket` (no keys, suite 3 and 17
 *   keys), `peekSessionId`, `decodeAsfPong`, then the payload through the setup decoders (Open
 *   Session Response, RAKP 2/4) or the message decoder;
 * - sealed messages: mutated IPMI response messages encrypted and authenticated with the
 *   session's real keys, so they pass the integrity check and reach the message and command
 *   decoders (a packet we sealed must always unseal to the same payload);
 * - command data: mutated FRU images and SDR records through their decoders and the sensor
 *   conversion (finite or undefined, never NaN);
 * - inventory: `readFru` and `readSensors` over a session whose answers come from mutated FRU
 *   and SDR data with random completion codes (the real `IpmiSession.call` error mapping).
 * Every codec failure must be an IpmiDecodeError; every inventory failure a BmcError; nothing
 * may hang (the SDR walk and FRU read must terminate on any answers).
 *
 * Long run: `RACKSIDE_FUZZ_ITERATIONS=120000 node --test dist/test/fuzz/ipmi.test.js`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BmcError } from '../../drivers/errors.js';
import {
  decodeBootFlagsResponse, decodeGetChannelAuthCapabilities, decodeGetChassisStatus, decodeGetDeviceId, decodeSetSessionPrivilegeLevel,
  type IpmiCommandRequest,
} from '../../drivers/ipmi/commands.js';
import { IpmiDecodeError } from '../../drivers/ipmi/decode-error.js';
import { decodeFru, decodeGetFruInventoryAreaInfo, decodeReadFruData } from '../../drivers/ipmi/fru.js';
import { readFru, readSensors } from '../../drivers/ipmi/ipmi-inventory.js';
import { IpmiSession } from '../../drivers/ipmi/ipmi-session.js';
import { decodeIpmiResponse, encodeIpmiResponse, ipmiChecksum, type IpmiResponse } from '../../drivers/ipmi/messages.js';
import { cipherSuite } from '../../drivers/ipmi/rakp.js';
import { decodeOpenSessionResponse, decodeRakp2, decodeRakp4 } from '../../drivers/ipmi/rakp-messages.js';
import { decodeAsfPong } from '../../drivers/ipmi/rmcp.js';
import {
  convertSensorReading, decodeGetSdr, decodeGetSdrRepositoryInfo, decodeGetSensorReading, decodeSdrRecord, sdrRecordLength,
} from '../../drivers/ipmi/sdr.js';
import { decodeSessionPacket, encodeSessionPacket, PayloadType, peekSessionId } from '../../drivers/ipmi/session-packet.js';
import { Dice } from './dice.js';
import { formatReport, fuzzInputs, fuzzSeed, runFuzz } from './engine.js';
import { mutateBytes, showBytes } from './mutate-bytes.js';
import { DATAGRAMS, FRU_IMAGE, RESPONSE_MESSAGES, SDR_RECORDS, SECURITY } from './ipmi-seeds.js';

const INPUTS = fuzzInputs(20_000);
const SUITES = { 3: cipherSuite(3), 17: cipherSuite(17) } as const;

type IpmiInput =
  | { readonly level: 'datagram'; readonly bytes: Buffer }
  | { readonly level: 'sealed'; readonly suite: 3 | 17; readonly message: Buffer; readonly iv: Buffer }
  | { readonly level: 'data'; readonly bytes: Buffer; readonly raw: number }
  | { readonly level: 'inventory'; readonly fru: Buffer; readonly records: readonly Buffer[]; readonly faults: number; readonly sensors: boolean };

/** Runs `decode`, letting only IpmiDecodeError through as a refusal. */
function decodes(decode: () => unknown): boolean {
  try {
    decode();
    return true;
  } catch (err) {
    if (err instanceof IpmiDecodeError) return false;
    throw err;
  }
}

const COMMAND_DECODERS: readonly ((data: Buffer) => unknown)[] = [
  decodeGetChannelAuthCapabilities, decodeGetDeviceId, decodeGetChassisStatus, decodeBootFlagsResponse, decodeSetSessionPrivilegeLevel,
  decodeGetFruInventoryAreaInfo, decodeReadFruData, decodeGetSdrRepositoryInfo, decodeGetSdr, decodeGetSensorReading, decodeSdrRecord,
  sdrRecordLength, decodeFru,
];

function checkMessage(payload: Buffer): boolean {
  let response: IpmiResponse;
  try {
    response = decodeIpmiResponse(payload);
  } catch (err) {
    if (err instanceof IpmiDecodeError) return false;
    throw err;
  }
  assert.ok(response.data.length <= payload.length, 'response data longer than the message');
  for (const decode of COMMAND_DECODERS) decodes(() => decode(response.data));
  return true;
}

function checkDatagram(bytes: Buffer): string {
  let accepted = decodes(() => decodeAsfPong(bytes)) ? 1 : 0;
  const peeked = peekSessionId(bytes);
  assert.ok(peeked === undefined || (Number.isInteger(peeked) && peeked >= 0 && peeked <= 0xffffffff));
  for (const security of [undefined, SECURITY[3], SECURITY[17]]) {
    let packet;
    try {
      packet = decodeSessionPacket(bytes, security);
    } catch (err) {
      if (err instanceof IpmiDecodeError) continue;
      throw err;
    }
    accepted++;
    assert.ok(packet.payload.length <= bytes.length, 'payload longer than the datagram');
    const p = packet.payload;
    if (packet.payloadType === PayloadType.openSessionResponse) decodes(() => decodeOpenSessionResponse(p));
    else if (packet.payloadType === PayloadType.rakp2) for (const suite of Object.values(SUITES)) decodes(() => decodeRakp2(p, suite));
    else if (packet.payloadType === PayloadType.rakp4) for (const suite of Object.values(SUITES)) decodes(() => decodeRakp4(p, suite));
    else checkMessage(p);
  }
  return accepted > 0 ? 'datagram decoded' : 'datagram refused';
}

function checkSealed(input: Extract<IpmiInput, { level: 'sealed' }>): string {
  const security = SECURITY[input.suite];
  const datagram = encodeSessionPacket({ payloadType: PayloadType.ipmi, sessionId: 0xa0a2a3a4, sequence: 9, payload: input.message }, security, input.iv);
  const packet = decodeSessionPacket(datagram, security); // our own sealed packet must always unseal
  assert.deepEqual(packet.payload, input.message, 'sealed payload round-trips');
  return checkMessage(packet.payload) ? 'sealed decoded' : 'sealed refused';
}

function checkData(input: Extract<IpmiInput, { level: 'data' }>): string {
  let ok = 0;
  for (const decode of COMMAND_DECODERS) if (decodes(() => decode(input.bytes))) ok++;
  try {
    const record = decodeSdrRecord(input.bytes);
    if (record.kind === 'full') {
      const value = convertSensorReading(record, input.raw);
      assert.ok(value === undefined || Number.isFinite(value), `sensor conversion gave ${String(value)}`);
    }
  } catch (err) {
    if (!(err instanceof IpmiDecodeError)) throw err;
  }
  return ok > 0 ? 'data decoded' : 'data refused';
}

/** A session whose answers come from the input: the real `call()` maps completion codes and decode errors. */
class ScriptedSession extends IpmiSession {
  readonly #input: Extract<IpmiInput, { level: 'inventory' }>;
  readonly #dice: Dice;

  constructor(input: Extract<IpmiInput, { level: 'inventory' }>) {
    super({ host: '127.0.0.1', port: 9, username: 'fuzz', password: 'fuzz', address: 'fuzz-bmc', keepaliveMs: 0 });
    this.#input = input;
    this.#dice = new Dice(input.faults);
  }

  #data(request: IpmiCommandRequest): Buffer {
    const d = request.data;
    const records = this.#input.records;
    if (request.netFn === 0x0a && request.command === 0x10) return Buffer.from([this.#input.fru.length & 0xff, this.#input.fru.length >> 8, 0]);
    if (request.netFn === 0x0a && request.command === 0x11) {
      const offset = d.readUInt16LE(1);
      const bytes = this.#input.fru.subarray(offset, offset + (d[3] ?? 0));
      return Buffer.concat([Buffer.from([bytes.length]), bytes]);
    }
    if (request.netFn === 0x0a && request.command === 0x20) return Buffer.from([0x51, records.length & 0xff, records.length >> 8, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0x02]);
    if (request.netFn === 0x0a && request.command === 0x22) return Buffer.from([0x34, 0x12]);
    if (request.netFn === 0x0a && request.command === 0x23) {
      const id = d.readUInt16LE(2);
      const index = records.findIndex((r) => r.length >= 2 && r.readUInt16LE(0) === id);
      const at = index < 0 ? id % Math.max(1, records.length) : index;
      const record = records[at] ?? Buffer.alloc(0);
      const next = at + 1 < records.length ? (records[at + 1]?.length ?? 0) >= 2 ? (records[at + 1] as Buffer).readUInt16LE(0) : at + 1 : 0xffff;
      const next16 = Buffer.alloc(2);
      next16.writeUInt16LE(next & 0xffff);
      return Buffer.concat([next16, record.subarray(d[4] ?? 0, (d[4] ?? 0) + (d[5] ?? 0))]);
    }
    return Buffer.from([this.#dice.int(256), this.#dice.int(256), this.#dice.int(256), this.#dice.int(256)]); // sensor reading
  }

  override request(request: IpmiCommandRequest): Promise<IpmiResponse> {
    const dice = this.#dice;
    let data = this.#data(request);
    if (dice.chance(0.05)) data = mutateBytes(dice, data, { seeds: [data], maxBytes: 64 });
    const completionCode = dice.chance(0.03) ? dice.pick([0xc0, 0xc1, 0xc5, 0xcb, 0xcc, 0xd4, 0xd5, 0xff]) : 0;
    const message = encodeIpmiResponse({ rqAddr: 0x81, netFn: request.netFn | 1, rqLun: 0, rsAddr: 0x20, rqSeq: 1, rsLun: 0, command: request.command, completionCode, data });
    return Promise.resolve(decodeIpmiResponse(message));
  }
}

async function checkInventory(input: Extract<IpmiInput, { level: 'inventory' }>): Promise<string> {
  const session = new ScriptedSession(input);
  try {
    if (input.sensors) {
      const sensors = await readSensors(session);
      for (const s of sensors) assert.ok(s.value === undefined || Number.isFinite(s.value), `sensor ${s.name} = ${String(s.value)}`);
    } else {
      await readFru(session);
    }
    return 'inventory read';
  } catch (err) {
    if (err instanceof BmcError) return `inventory ${err.code}`;
    throw err;
  } finally {
    await session.close();
  }
}

function generate(dice: Dice, i: number): IpmiInput {
  switch (i % 10) {
    case 0: case 1: case 2: case 3:
      return { level: 'datagram', bytes: mutateBytes(dice, dice.pick(DATAGRAMS), { seeds: DATAGRAMS, lengthOffsets: [13, 14, 15, 16, 17, 18, 19, 20, 25], maxBytes: 512 }) };
    case 4: case 5: case 6: {
      let message = mutateBytes(dice, dice.pick(RESPONSE_MESSAGES), { seeds: RESPONSE_MESSAGES, maxBytes: 300 });
      if (message.length >= 3 && dice.chance(0.7)) { // keep the checksums valid so the data reaches the decoders
        message = Buffer.from(message);
        message[2] = ipmiChecksum(message, 0, 2);
        message[message.length - 1] = ipmiChecksum(message, 3, message.length - 1);
      }
      return { level: 'sealed', suite: dice.pick([3, 17] as const), message, iv: dice.bytes(16) };
    }
    case 7: case 8: {
      const seeds = [FRU_IMAGE, ...SDR_RECORDS];
      return { level: 'data', bytes: mutateBytes(dice, dice.pick(seeds), { seeds, lengthOffsets: [1, 2, 3, 4, 5, 9, 17], maxBytes: 1024 }), raw: dice.int(256) };
    }
    default: {
      const records = SDR_RECORDS.map((r) => (dice.chance(0.3) ? mutateBytes(dice, r, { seeds: SDR_RECORDS, lengthOffsets: [0, 1, 2, 3, 4], maxBytes: 300 }) : r));
      if (dice.chance(0.2)) records.push(...records.slice(0, dice.int(records.length)));
      return {
        level: 'inventory', fru: dice.chance(0.5) ? mutateBytes(dice, FRU_IMAGE, { seeds: [FRU_IMAGE], maxBytes: 8192 }) : FRU_IMAGE,
        records, faults: dice.int(2 ** 31), sensors: dice.chance(0.5),
      };
    }
  }
}

function show(input: IpmiInput): string {
  switch (input.level) {
    case 'datagram': return `datagram ${showBytes(input.bytes)}`;
    case 'sealed': return `suite ${input.suite} iv ${input.iv.toString('hex')} message ${showBytes(input.message)}`;
    case 'data': return `raw ${input.raw} data ${showBytes(input.bytes)}`;
    default: return `inventory (${input.sensors ? 'sensors' : 'fru'}, faults ${input.faults}) fru ${showBytes(input.fru, 256)} records ${input.records.map((r) => r.toString('hex')).join(' ')}`;
  }
}

test('fuzz setup: every seed datagram decodes with the keys it was sealed with', () => {
  for (const d of DATAGRAMS) assert.equal(checkDatagram(d), 'datagram decoded', d.toString('hex'));
  for (const m of RESPONSE_MESSAGES) assert.equal(checkSealed({ level: 'sealed', suite: 3, message: m, iv: Buffer.alloc(16, 1) }), 'sealed decoded');
});

test(`fuzz ipmi: ${INPUTS} datagrams, sealed messages, command data and inventory walks`, async (t) => {
  const report = await runFuzz<IpmiInput>({
    name: 'ipmi',
    seed: fuzzSeed(0x1b41),
    inputs: INPUTS,
    generate,
    check(input) {
      switch (input.level) {
        case 'datagram': return checkDatagram(input.bytes);
        case 'sealed': return checkSealed(input);
        case 'data': return checkData(input);
        default: return checkInventory(input);
      }
    },
    show,
  });
  t.diagnostic(formatReport(report));
  if (report.focused) return;
  for (const outcome of ['datagram decoded', 'datagram refused', 'sealed decoded', 'sealed refused', 'inventory read']) {
    assert.ok((report.outcomes[outcome] ?? 0) > 0, `no input ended "${outcome}": the generator misses a path`);
  }
});
