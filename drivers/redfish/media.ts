/**
 * @module Redfish VirtualMedia: the slot collection on the System or the Manager (order from
 * the vendor quirks), the slot for a device chosen by `MediaTypes` (CD/DVD for `cd`, USBStick,
 * Floppy), insert through `#VirtualMedia.InsertMedia` (or PATCH `Image`/`Inserted` where the
 * action is missing, as sushy does), eject before insert when another image is in, and eject
 * through `#VirtualMedia.EjectMedia` with an empty JSON body (iLO needs the `{}`). sushy's
 * quirks: `Inserted`/`WriteProtected` are only sent when not the defaults (Supermicro X11/X12
 * reject them) and a BMC that asks for `TransferProtocolType` gets one retry with it.
 */
import type { InsertMediaRequest, VirtualMediaControl, VirtualMediaDevice, VirtualMediaSlot } from '../capabilities.js';
import type { RedfishContext } from './context.js';
import { httpStatusOf } from './http-errors.js';
import { decodeManager, decodeVirtualMedia, type VirtualMediaResource } from './resources.js';

const DEVICE_MEDIA_TYPES: Readonly<Record<VirtualMediaDevice, readonly string[]>> = {
  cd: ['CD', 'DVD'], usb: ['USBStick'], floppy: ['Floppy'],
};

/** The device a slot serves: CD/DVD first, then USB stick, then floppy; undefined when none is listed. */
export function deviceOfSlot(slot: Pick<VirtualMediaResource, 'mediaTypes' | 'id'>): VirtualMediaDevice | undefined {
  for (const device of ['cd', 'usb', 'floppy'] as const) {
    if (slot.mediaTypes.some((t) => DEVICE_MEDIA_TYPES[device].includes(t))) return device;
  }
  if (slot.mediaTypes.length === 0 && /cd|dvd/i.test(slot.id)) return 'cd';
  return undefined;
}

/**
 * The slot for `device`: among slots serving it, the one with the fewest other media types
 * (a dedicated CD/DVD slot beats a combined one).
 */
export function pickSlot(slots: readonly VirtualMediaResource[], device: VirtualMediaDevice): VirtualMediaResource | undefined {
  const wanted = DEVICE_MEDIA_TYPES[device];
  const serving = slots.filter((s) => s.mediaTypes.some((t) => wanted.includes(t)) || (s.mediaTypes.length === 0 && deviceOfSlot(s) === device));
  const foreign = (s: VirtualMediaResource): number => s.mediaTypes.filter((t) => !wanted.includes(t)).length;
  return [...serving].sort((a, b) => foreign(a) - foreign(b))[0];
}

function transferProtocolOf(url: string): string | undefined {
  if (url.startsWith('https://')) return 'HTTPS';
  if (url.startsWith('http://')) return 'HTTP';
  return undefined;
}

/** Builds the virtual media capability. */
export function createVirtualMediaControl(ctx: RedfishContext): VirtualMediaControl {
  const collections = async (): Promise<string[]> => {
    const { value: system } = await ctx.system();
    const onManager = async (): Promise<string | undefined> => (await ctx.fetch(await ctx.managerUri(), decodeManager)).value.virtualMedia;
    const order = ctx.quirks.virtualMediaOn === 'system-first'
      ? [async () => Promise.resolve(system.links.virtualMedia), onManager]
      : [onManager, async () => Promise.resolve(system.links.virtualMedia)];
    const found: string[] = [];
    for (const get of order) {
      const uri = await get();
      if (uri !== undefined && !found.includes(uri)) found.push(uri);
    }
    return found;
  };
  const slots = async (): Promise<VirtualMediaResource[]> => {
    for (const collection of await collections()) {
      const members = await ctx.members(collection);
      if (members.length === 0) continue;
      const out: VirtualMediaResource[] = [];
      for (const m of members) out.push((await ctx.fetch(m, decodeVirtualMedia)).value);
      return out;
    }
    throw ctx.unsupported('virtualMedia', 'slots', 'neither the System nor the Manager has VirtualMedia');
  };
  const slotFor = async (device: VirtualMediaDevice, operation: string): Promise<VirtualMediaResource> => {
    const slot = pickSlot(await slots(), device);
    if (slot === undefined) throw ctx.unsupported('virtualMedia', `${operation}(${device})`, `no virtual media slot takes ${DEVICE_MEDIA_TYPES[device].join('/')}`);
    return slot;
  };
  const eject = async (slot: VirtualMediaResource): Promise<void> => {
    if (slot.ejectTarget !== undefined) {
      await ctx.client.waitForTask(await ctx.client.post(slot.ejectTarget, {}));
      return;
    }
    await ctx.client.patch(slot.uri, { Image: null, Inserted: false });
  };
  const insert = async (slot: VirtualMediaResource, request: InsertMediaRequest): Promise<void> => {
    const writeProtected = request.writeProtected ?? true;
    if (slot.insertTarget === undefined) {
      await ctx.client.patch(slot.uri, { Image: request.imageUrl, Inserted: true, WriteProtected: writeProtected });
      return;
    }
    const body: Record<string, unknown> = { Image: request.imageUrl };
    if (!writeProtected) body.WriteProtected = false;
    try {
      await ctx.client.waitForTask(await ctx.client.post(slot.insertTarget, body));
    } catch (err) {
      const protocol = transferProtocolOf(request.imageUrl);
      const asks = (httpStatusOf(err) === 400 || httpStatusOf(err) === 500) && err instanceof Error && err.message.includes('TransferProtocolType');
      if (!asks || protocol === undefined) throw err;
      await ctx.client.waitForTask(await ctx.client.post(slot.insertTarget, { ...body, TransferProtocolType: protocol }));
    }
  };
  return {
    async insertMedia(request) {
      const device = request.device ?? 'cd';
      const slot = await slotFor(device, 'insertMedia');
      if (slot.inserted && slot.image === request.imageUrl) return;
      if (slot.inserted) await eject(slot);
      await insert(slot, request);
    },
    async ejectMedia(device = 'cd') {
      const slot = await slotFor(device, 'ejectMedia');
      if (!slot.inserted) return;
      await eject(slot);
    },
    async getMediaStatus(): Promise<VirtualMediaSlot[]> {
      return (await slots()).flatMap((slot) => {
        const device = deviceOfSlot(slot);
        return device === undefined ? [] : [{ device, inserted: slot.inserted, imageUrl: slot.inserted ? slot.image : undefined }];
      });
    },
  };
}
