/**
 * @module Classifies a DHCPv6 client for booting (RFC 5970): its architecture from option 61
 * (the IANA processor architecture types shared with DHCPv4 option 93), its vendor class
 * (option 16, enterprise 343 `PXEClient…` / `HTTPClient…`) and user class (option 15, `iPXE`).
 * iPXE sends user class `iPXE` beside vendor class `PXEClient` and architecture 7: the user
 * class decides, so it is told apart from the firmware that loaded it.
 * @pure
 */
import { describeArchType, type ClientBootClass } from '../dhcp/client-info.js';
import type { Dhcp6Options } from './options.js';
import { getClientArchTypes, getUserClasses, getVendorClass } from './values.js';

/** The enterprise number of the PXE and HTTP boot vendor classes (Intel, RFC 5970 §3.3 practice). */
export const PXE_ENTERPRISE = 343;

/** What the responder and the flight recorder know of a DHCPv6 client's boot firmware (the vendor class: option 16's first data item). */
export type Client6Info = ClientBootClass;

/** True when the client network-boots and so wants boot options. */
export function isNetboot6(c: Client6Info): boolean {
  return c.isPxeClient || c.isHttpClient || c.isIpxe || c.archType !== undefined;
}

/** Classifies a client from its message options. */
export function classifyClient6(options: Dhcp6Options): Client6Info {
  const vc = getVendorClass(options);
  const vendorClass = vc?.data[0];
  const userClasses = getUserClasses(options);
  const archType = getClientArchTypes(options)[0];
  const info = archType === undefined ? undefined : describeArchType(archType);
  const isHttpClient = vendorClass?.startsWith('HTTPClient') === true || info?.http === true;
  const out: Client6Info = {
    isPxeClient: vendorClass?.startsWith('PXEClient') === true,
    isHttpClient,
    isIpxe: userClasses.includes('iPXE'),
    arch: info?.arch ?? 'unknown',
    firmware: info?.firmware ?? 'unknown',
    transport: isHttpClient ? 'http' : 'tftp',
    userClasses,
  };
  if (archType !== undefined) out.archType = archType;
  if (vendorClass !== undefined) out.vendorClass = vendorClass;
  return out;
}
