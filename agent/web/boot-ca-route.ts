/**
 * @module `GET /api/v1/boot/ca?format=pem|der|edk2`: the boot CA that firmware enrols to trust
 * boot HTTPS (`http.tls: auto`, docs/https-boot.md) — PEM (default), DER (`application/pkix-cert`,
 * for firmware setup menus) or `edk2` (the EFI_SIGNATURE_LIST OVMF reads from fw_cfg
 * `etc/edk2/https/cacerts`, agent/boot/efi-signature-list.ts). 404 when there is none: no
 * `http.tls`, the operator's own certificate (its issuer is theirs to enrol), or the boot
 * services have not made it yet. The CA certificate is public: reads need no token.
 */
import type { Request, RequestHandler, Response } from 'express';
import { encodeEfiSignatureLists, pemCertificates } from '../boot/efi-signature-list.js';
import { readBootCa } from '../boot/boot-ca.js';
import type { Config } from '../config.js';
import { ApiError, ApiErrorCode, ValidationError } from '../errors.js';

/** The export formats of the boot CA. */
export const BOOT_CA_FORMATS = ['pem', 'der', 'edk2'] as const;
export type BootCaFormat = (typeof BOOT_CA_FORMATS)[number];

/** The CA PEM as `format`: its text, the first certificate's DER, or the EFI signature list of every certificate in it. */
export function bootCaBytes(pem: string, format: BootCaFormat): Buffer {
  if (format === 'pem') return Buffer.from(pem);
  const certs = pemCertificates(pem);
  if (certs.length === 0) throw new Error('the boot CA file holds no certificate');
  return format === 'der' ? certs[0] as Buffer : encodeEfiSignatureLists(certs);
}

function formatOf(req: Request): BootCaFormat {
  const value: unknown = (req.query as Record<string, unknown>).format;
  if (value === undefined || value === '') return 'pem';
  if (typeof value === 'string' && (BOOT_CA_FORMATS as readonly string[]).includes(value)) return value as BootCaFormat;
  throw new ValidationError('query.format', `must be one of ${BOOT_CA_FORMATS.join(', ')}`);
}

const CONTENT_TYPE: Readonly<Record<BootCaFormat, string>> = { pem: 'application/x-pem-file', der: 'application/pkix-cert', edk2: 'application/octet-stream' };

/** The route handler (mount at `/boot/ca` under `/api/v1`). */
export function bootCaHandler(config: Pick<Config, 'agent' | 'http'>): RequestHandler {
  return (req: Request, res: Response, next) => {
    const run = async (): Promise<void> => {
      const format = formatOf(req);
      const tls = config.http.tls;
      const none = (why: string): ApiError => new ApiError(ApiErrorCode.notFound, 404, 'bootCA', `no boot CA: ${why}`);
      if (tls === undefined) throw none('http.tls is not set');
      if (tls.cert !== undefined) throw none('http.tls names the operator\'s certificate; enrol the CA that issued it');
      const pem = await readBootCa(config.agent.stateDir);
      if (pem === undefined) throw none('not made yet (the boot services make it when they start)');
      res.setHeader('content-type', CONTENT_TYPE[format]);
      res.setHeader('content-disposition', `attachment; filename="rackside-boot-ca.${format === 'edk2' ? 'esl' : format}"`);
      res.send(bootCaBytes(pem, format));
    };
    run().catch(next);
  };
}
