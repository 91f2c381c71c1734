/**
 * @module The per-host rackside ISO for virtual-media hosts (`redfish-virtualmedia://`,
 * `idrac-virtualmedia://` …; docs/architecture.md, "Boot flow": they skip DHCP/TFTP/iPXE and boot the ISO
 * the BMC attaches). One base ISO is built by `rackside images build --format iso` into the
 * ramdisk directory (`rackside.iso` + `manifest.json`, whose `iso.hostOverlaySlot` says where
 * `/boot/host.img` lies). A host's ISO is that base with the host overlay (agent URL and the
 * host's ramdisk token, images/host-overlay.ts) spliced into the slot while streaming
 * (images/iso-host.ts `patchIsoChunk`): no per-host file is ever written.
 *
 * The ISO is served by boot HTTP at `/ramdisk/v1/vmedia/<name>.iso` (another architecture's than
 * the head node's at `/ramdisk/v1/vmedia/<arch>/<name>.iso`, from `ramdisk/<arch>/`), where the name is a hash
 * of the token: BMCs fetch virtual media without our bearer token, so the URL itself must be
 * unguessable, and it must not carry the token in clear (BMCs log media URLs). Single byte
 * ranges are honoured (RFC 9110 §14; iDRAC and iLO read media by ranges).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { buildHostOverlay, decodeManifest, HEAD_NODE_ARCH, patchIsoChunk, type DebianArch, type HostOverlaySlot } from '../../../images/index.js';

/** Boot HTTP path prefix of per-host ISOs. */
export const VMEDIA_PATH = '/ramdisk/v1/vmedia';

/** The base ISO and where a host's overlay goes in it. */
export interface BaseIso {
  path: string;
  sizeBytes: number;
  mtimeMs: number;
  slot: HostOverlaySlot;
}

/** Thrown when no usable base ISO is in the ramdisk directory (the message says how to build one). */
export class HostIsoUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'HostIsoUnavailableError';
  }
}

/** Returns the URL name of the ISO of the host with ramdisk token `token` (a hash: never the token itself). */
export function hostIsoName(token: string): string {
  return createHash('sha256').update(`rackside-vmedia\0${token}`).digest('hex').slice(0, 32);
}

/** Options of {@link HostIsoSource}. */
export interface HostIsoSourceOptions {
  /** Where the head node's `rackside.iso` and `manifest.json` are (`<images.cacheDir>/ramdisk`); another architecture's are in `<arch>/` below. */
  ramdiskDir: string;
  /** Boot HTTP's base URL as hosts and BMCs reach it. */
  httpBaseUrl: string;
}

/** Per-host ISOs over the base ISO of each architecture (see the module comment). */
export class HostIsoSource {
  constructor(private readonly options: HostIsoSourceOptions) {}

  /**
   * The media URL a BMC is given for the host with `token`: `…/vmedia/<name>.iso` for the head
   * node's architecture, `…/vmedia/<arch>/<name>.iso` for another (the arm64 ISO, UEFI only).
   */
  urlFor(token: string, arch: DebianArch = HEAD_NODE_ARCH): string {
    const sub = arch === HEAD_NODE_ARCH ? '' : `/${arch}`;
    return `${this.options.httpBaseUrl.replace(/\/+$/, '')}${VMEDIA_PATH}${sub}/${hostIsoName(token)}.iso`;
  }

  /** Resolves with `arch`'s base ISO, or rejects with {@link HostIsoUnavailableError} saying what is missing. */
  async baseIso(arch: DebianArch = HEAD_NODE_ARCH): Promise<BaseIso> {
    const dir = arch === HEAD_NODE_ARCH ? this.options.ramdiskDir : join(this.options.ramdiskDir, arch);
    const path = join(dir, 'rackside.iso');
    const manifestPath = join(dir, 'manifest.json');
    const hint = `build it with \`rackside images build${arch === HEAD_NODE_ARCH ? '' : ` --arch ${arch}`} --format iso\` (output in ${dir})`;
    const facts = await stat(path).catch(() => undefined);
    if (facts === undefined) throw new HostIsoUnavailableError(`virtual media boot needs the rackside ISO, and ${path} does not exist: ${hint}`);
    let slot: HostOverlaySlot | undefined;
    try {
      slot = decodeManifest(await readFile(manifestPath, 'utf8')).iso?.hostOverlaySlot;
    } catch (error) {
      throw new HostIsoUnavailableError(`${manifestPath} is missing or unreadable (${error instanceof Error ? error.message : String(error)}): ${hint}`, { cause: error });
    }
    if (slot === undefined) throw new HostIsoUnavailableError(`${manifestPath} describes an initrd build, not the ISO: ${hint}`);
    return { path, sizeBytes: facts.size, mtimeMs: facts.mtimeMs, slot: { offsetBytes: slot.offsetBytes, sizeBytes: slot.sizeBytes } };
  }

  /**
   * Answers a GET/HEAD for the ISO of the host with `token`: 200 (whole), 206 (one range) or 416;
   * resolves with the first byte sent (undefined when no body was sent) once every byte of the
   * body was handed to the response — also when the client closed right after the last one, before the
   * response was ended; rejects when the client went away earlier.
   */
  async serve(req: Request, res: Response, token: string, arch: DebianArch = HEAD_NODE_ARCH): Promise<number | undefined> {
    const base = await this.baseIso(arch);
    const overlay = buildHostOverlay({ agentUrl: this.options.httpBaseUrl, token });
    // The ETag names the base build and the host: a new token or ISO build is another representation.
    const etag = `"${base.sizeBytes.toString(16)}-${Math.floor(base.mtimeMs).toString(16)}-${hostIsoName(token).slice(0, 8)}"`;
    res.setHeader('accept-ranges', 'bytes');
    res.setHeader('etag', etag);
    res.setHeader('content-type', 'application/x-iso9660-image');
    let start = 0;
    let end = base.sizeBytes - 1;
    const ranges = req.headers.range === undefined ? undefined : req.range(base.sizeBytes, { combine: true });
    const ifRange = req.headers['if-range'];
    if (ranges === -1) {
      res.status(416).setHeader('content-range', `bytes */${base.sizeBytes}`);
      res.end();
      return undefined;
    }
    if (ranges !== undefined && ranges !== -2 && ranges.length === 1 && (ifRange === undefined || ifRange === etag)) {
      const only = ranges[0];
      if (only !== undefined) {
        start = only.start;
        end = only.end;
        res.status(206).setHeader('content-range', `bytes ${start}-${end}/${base.sizeBytes}`);
      }
    } else {
      res.status(200);
    }
    res.setHeader('content-length', String(end - start + 1));
    if (req.method === 'HEAD' || base.sizeBytes === 0) {
      res.end();
      return undefined;
    }
    const slot = base.slot;
    let offset = start;
    async function* patched(source: AsyncIterable<Buffer>): AsyncGenerator<Uint8Array> {
      for await (const chunk of source) {
        const out = patchIsoChunk(chunk, offset, slot, overlay);
        offset += chunk.length;
        yield out;
      }
    }
    try {
      await pipeline(Readable.from(patched(createReadStream(base.path, { start, end }))), res);
    } catch (error) {
      // A client that has every byte of the Content-Length may close before our end() ran (curl
      // exits at once): the pipeline then reports a premature close, but the body was served.
      if (offset <= end || res.writableLength > 0) throw error;
    }
    return start;
  }
}
