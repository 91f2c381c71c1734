/**
 * @module IP address text as the flight recorder and the logs show it. A boot service listening
 * on `::` (dual-stack, the default when the provisioning network has IPv6) sees IPv4 clients as
 * IPv4-mapped IPv6 addresses (`::ffff:192.0.2.10`, RFC 4291 §2.5.5.2); events name them as the
 * DHCPv4 server does (`192.0.2.10`), so one host's DHCP, TFTP and HTTP lines share its address.
 * @pure
 */

/** `address` without an IPv4-mapped prefix (`::ffff:a.b.c.d` → `a.b.c.d`); anything else unchanged. */
export function unmapIpv4(address: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return m?.[1] ?? address;
}

/** True for an IPv6 address that is not an IPv4-mapped one: the client speaks IPv6. */
export function isIpv6Address(address: string): boolean {
  return unmapIpv4(address).includes(':');
}
