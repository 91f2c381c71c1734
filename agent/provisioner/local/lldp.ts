/**
 * @module LLDP neighbours the ramdisk heard (images/helpers/rackside-lldp.c, one JSON object per
 * NIC: IEEE 802.1AB TLVs 1 chassis ID, 2 port ID, 4 port description, 5 system name, 8 management
 * address, and the IEEE 802.1 port VLAN TLVs), as both the discovery report and the inspection's
 * inventory carry them: decoding (every field checked and capped) and placing them on the NICs of
 * HardwareDetails in metal3's shape (`lldp.switchID/portID/switchSystemName`, `vlans`).
 * @pure
 */
import { isJsonObject } from '../../json-value.js';

/** One LLDP neighbour heard on a NIC. */
export interface LldpNeighbor {
  /** The NIC it was heard on (`eth0`). */
  interface: string;
  chassisId?: string;
  portId?: string;
  portDescription?: string;
  systemName?: string;
  managementAddress?: string;
  vlans: number[];
}

/** At most this many neighbours in one report (a NIC hears one switch; 64 NICs is plenty). */
export const MAX_LLDP_NEIGHBORS = 64;

/** Makes the error for a bad field (`field` names it, e.g. `lldp[0].vlans[2]`). */
export type LldpFieldError = (field: string, message: string) => Error;

/** Printable text without control characters, trimmed and capped; undefined when absent or blank. */
function text(value: unknown, field: string, max: number, fail: LldpFieldError): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw fail(field, 'must be a string');
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  return clean === '' ? undefined : clean.slice(0, max);
}

function decodeNeighbor(value: unknown, at: string, fail: LldpFieldError): LldpNeighbor {
  if (!isJsonObject(value)) throw fail(at, 'must be an object');
  const iface = text(value.interface, `${at}.interface`, 15, fail);
  if (iface === undefined) throw fail(`${at}.interface`, 'is required');
  const vlansIn: unknown = value.vlans ?? [];
  if (!Array.isArray(vlansIn) || vlansIn.length > 4094) throw fail(`${at}.vlans`, 'must be a list of VLAN ids');
  const vlans = vlansIn.map((v, j) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 4094) throw fail(`${at}.vlans[${j}]`, 'must be a VLAN id 1..4094');
    return v;
  });
  const field = (key: string, name: string): Record<string, string> => {
    const v = text(value[key], `${at}.${key}`, 255, fail);
    return v === undefined ? {} : { [name]: v };
  };
  return {
    interface: iface, ...field('chassis_id', 'chassisId'), ...field('port_id', 'portId'), ...field('port_description', 'portDescription'),
    ...field('system_name', 'systemName'), ...field('management_address', 'managementAddress'), vlans,
  };
}

/**
 * Decodes the ramdisk's `lldp` list (absent: none); throws what `fail` makes for the first bad
 * field, named from `field` (`lldp`, `lldp[3].port_id`).
 */
export function decodeLldpNeighbors(value: unknown, fail: LldpFieldError, field = 'lldp'): LldpNeighbor[] {
  const list: unknown = value ?? [];
  if (!Array.isArray(list) || list.length > MAX_LLDP_NEIGHBORS) throw fail(field, `must be a list of at most ${MAX_LLDP_NEIGHBORS} neighbours`);
  return list.map((v, i) => decodeNeighbor(v, `${field}[${i}]`, fail));
}

/**
 * The NICs of `nics` with the LLDP neighbours heard on them: metal3's `lldp` (switch chassis ID,
 * port ID, system name) and the VLANs the switch announced, unless the NIC already had them.
 */
export function nicsWithLldp<T extends { name?: string; lldp?: object; vlans?: { id?: number }[] }>(nics: readonly T[], neighbors: readonly LldpNeighbor[]): T[] {
  return nics.map((nic) => {
    const heard = neighbors.find((n) => n.interface === nic.name);
    if (heard === undefined) return nic;
    const lldp = {
      ...(heard.chassisId === undefined ? {} : { switchID: heard.chassisId }),
      ...(heard.portId === undefined ? {} : { portID: heard.portId }),
      ...(heard.systemName === undefined ? {} : { switchSystemName: heard.systemName }),
    };
    return {
      ...nic,
      ...(nic.lldp === undefined && Object.keys(lldp).length > 0 ? { lldp } : {}),
      ...(nic.vlans === undefined && heard.vlans.length > 0 ? { vlans: heard.vlans.map((id) => ({ id })) } : {}),
    };
  });
}
