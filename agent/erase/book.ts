/**
 * @module The erase record book: signed erase records (record.ts) in the store's `eraseRecords`
 * sublevel, keyed by record id. A record is written once (a result the ramdisk posts again finds
 * its record and changes nothing), synced before the ramdisk's result is acknowledged, and never
 * dropped by rackside: deleting a host keeps its records (docs/erase-records.md).
 */
import type { KeyValue } from '../store/types.js';
import { isJsonObject } from '../json-value.js';
import { encodeEraseRecord, ERASE_RECORD_ID, type EraseRecord } from './record.js';

/** Signs documents for the book: an SSHSIG signer bound to the erase record namespace. */
export interface EraseRecordSigner {
  /** The armored SSHSIG signature of `document`. */
  sign(document: Uint8Array): string;
  /** The public key line (`ssh-ed25519 AAAA… comment`) verifiers trust. */
  readonly publicKey: string;
  /** Its `SHA256:` fingerprint. */
  readonly fingerprint: string;
}

/** A record as stored and served: the exact signed text and its signature. */
export interface SignedEraseRecord {
  document: string;
  signature: string;
}

/** Filters of {@link EraseRecordBook.list}. */
export interface EraseRecordFilter {
  /** Only records of the host of this name (hosts deleted since included). */
  host?: string;
}

function signedOf(value: unknown): SignedEraseRecord | undefined {
  if (!isJsonObject(value) || typeof value.document !== 'string' || typeof value.signature !== 'string') return undefined;
  return { document: value.document, signature: value.signature };
}

function recordOf(signed: SignedEraseRecord): EraseRecord | undefined {
  try {
    const parsed: unknown = JSON.parse(signed.document);
    if (!isJsonObject(parsed) || parsed.kind !== 'EraseRecord' || typeof parsed.id !== 'string' || !isJsonObject(parsed.host)) return undefined;
    return parsed as unknown as EraseRecord; // written by encodeEraseRecord from an EraseRecord
  } catch {
    return undefined;
  }
}

/** The signed erase records of one agent. */
export class EraseRecordBook {
  readonly #kv: KeyValue<unknown>;
  readonly #signer: EraseRecordSigner;

  constructor(kv: KeyValue<unknown>, signer: EraseRecordSigner) {
    this.#kv = kv;
    this.#signer = signer;
  }

  /** The key verifiers trust. */
  get signingKey(): { publicKey: string; fingerprint: string } {
    return { publicKey: this.#signer.publicKey, fingerprint: this.#signer.fingerprint };
  }

  /**
   * Signs and stores `record` unless a record of its id exists (first write wins: the stored
   * text was already handed out). Resolves once the write is synced.
   */
  async add(record: EraseRecord): Promise<'added' | 'exists'> {
    if (signedOf(await this.#kv.get(record.id)) !== undefined) return 'exists';
    const document = encodeEraseRecord(record);
    const signed: SignedEraseRecord = { document, signature: this.#signer.sign(Buffer.from(document, 'utf8')) };
    await this.#kv.put(record.id, signed);
    return 'added';
  }

  /** The signed record, or undefined (also for an id that is not a record id). */
  async get(id: string): Promise<SignedEraseRecord | undefined> {
    if (!ERASE_RECORD_ID.test(id)) return undefined;
    return signedOf(await this.#kv.get(id));
  }

  /** The records, newest first (by `finishedAt`, then id). Unreadable entries are skipped. */
  async list(filter: EraseRecordFilter = {}): Promise<EraseRecord[]> {
    const records: EraseRecord[] = [];
    for (const [, value] of await this.#kv.entries()) {
      const signed = signedOf(value);
      const record = signed === undefined ? undefined : recordOf(signed);
      if (record === undefined) continue;
      if (filter.host !== undefined && record.host.name !== filter.host) continue;
      records.push(record);
    }
    return records.sort((a, b) => (a.finishedAt === b.finishedAt ? a.id.localeCompare(b.id) : a.finishedAt < b.finishedAt ? 1 : -1));
  }
}
