/**
 * @module The EFI_SIGNATURE_LIST encoding of X.509 CA certificates (UEFI 2.10 §32.4.1, "Signature
 * Database"): what EDK2's HTTPS boot reads as its trusted CAs — the `TlsCaCertificate` variable,
 * which OVMF fills from fw_cfg `etc/edk2/https/cacerts` (OvmfPkg TlsAuthConfigLib; QEMU:
 * `-fw_cfg name=etc/edk2/https/cacerts,file=…`), the format `p11-kit extract --format=edk2-cacerts`
 * writes. One list per certificate, each with one EFI_SIGNATURE_DATA:
 *
 * | bytes | field                                                  |
 * |-------|--------------------------------------------------------|
 * | 16    | SignatureType = EFI_CERT_X509_GUID                     |
 * | 4     | SignatureListSize (little-endian) = 28 + SignatureSize |
 * | 4     | SignatureHeaderSize = 0                                |
 * | 4     | SignatureSize = 16 + DER length                        |
 * | 16    | SignatureOwner (a GUID naming who enrolled it)         |
 * | n     | the certificate, DER                                   |
 *
 * GUIDs are stored as EFI_GUID: Data1 (u32), Data2 and Data3 (u16) little-endian, Data4 as is.
 * @pure
 */

/** EFI_CERT_X509_GUID (UEFI 2.10 §32.4.1). */
export const EFI_CERT_X509_GUID = 'a5c059a1-94e4-4aa7-87b5-ab155c2bf072';

/** The SignatureOwner rackside writes: a fixed GUID naming rackside as the enroller. */
export const RACKSIDE_SIGNATURE_OWNER = '5d8e2a6c-3b1f-4e57-9a0c-72b4e1f6d839';

/** `guid` (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`) as the 16 bytes of an EFI_GUID; throws on a malformed one. */
export function encodeEfiGuid(guid: string): Buffer {
  const m = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/i.exec(guid);
  if (m === null) throw new TypeError(`not a GUID: ${JSON.stringify(guid)}`);
  const out = Buffer.alloc(16);
  out.writeUInt32LE(Number.parseInt(m[1] ?? '', 16), 0);
  out.writeUInt16LE(Number.parseInt(m[2] ?? '', 16), 4);
  out.writeUInt16LE(Number.parseInt(m[3] ?? '', 16), 6);
  Buffer.from(`${m[4] ?? ''}${m[5] ?? ''}`, 'hex').copy(out, 8);
  return out;
}

/**
 * The EFI_SIGNATURE_LIST blob trusting `certificates` (each DER), one list per certificate, in
 * order, owned by `owner` (default {@link RACKSIDE_SIGNATURE_OWNER}). Throws on an empty list.
 */
export function encodeEfiSignatureLists(certificates: readonly Uint8Array[], owner: string = RACKSIDE_SIGNATURE_OWNER): Buffer {
  if (certificates.length === 0) throw new TypeError('an EFI signature list needs at least one certificate');
  const type = encodeEfiGuid(EFI_CERT_X509_GUID);
  const ownerBytes = encodeEfiGuid(owner);
  const lists = certificates.map((der) => {
    const header = Buffer.alloc(28);
    type.copy(header, 0);
    header.writeUInt32LE(28 + 16 + der.length, 16);
    header.writeUInt32LE(0, 20);
    header.writeUInt32LE(16 + der.length, 24);
    return Buffer.concat([header, ownerBytes, der]);
  });
  return Buffer.concat(lists);
}

/** The DER bodies of every `CERTIFICATE` block in `pem`, in order. */
export function pemCertificates(pem: string): Buffer[] {
  const out: Buffer[] = [];
  for (const m of pem.matchAll(/-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/g)) {
    out.push(Buffer.from((m[1] ?? '').replace(/\s+/g, ''), 'base64'));
  }
  return out;
}
