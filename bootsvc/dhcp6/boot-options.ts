/**
 * @module The boot options of a DHCPv6 reply (RFC 5970): option 59 Boot File URL from the
 * client's boot decision — `tftp://[server]/file` for PXE firmware, the `http://[…]` URL for
 * UEFI HTTP boot, the per-host script URL for iPXE — and, for HTTP boot clients only, vendor
 * class `HTTPClient` echoed back (EDK2's HttpBootDhcp6 takes no offer without it). Vendor class
 * `PXEClient` is never echoed: EDK2 then reads the offer as a proxy/BINL offer and waits on
 * port 4011.
 * @pure
 */
import type { BootDecision } from '../boot-lookup.js';
import { urlHost } from './address6.js';
import { isNetboot6, PXE_ENTERPRISE, type Client6Info } from './client-info.js';
import type { Dhcp6OptionTlv } from './options.js';
import { bootFileUrlOption, vendorClassOption } from './values.js';

/** A boot file as a URL: URLs unchanged, TFTP names as `tftp://[server]/name` (RFC 5970 §3.1). */
export function bootFileUrl(file: string, tftpServer: string): string {
  return /^[a-z]+:\/\//i.test(file) ? file : `tftp://${urlHost(tftpServer)}/${file.replace(/^\/+/, '')}`;
}

/** The URL a client is given for `decision`, or `undefined` when it should not network-boot now. */
export function bootUrlFor(client: Client6Info, decision: BootDecision | undefined, tftpServer: string): string | undefined {
  if (decision === undefined || !isNetboot6(client)) return undefined;
  if (decision.kind === 'ipxe-script') return client.isIpxe ? decision.scriptUrl : bootFileUrl(decision.loader, tftpServer);
  if (decision.kind === 'boot-file') return bootFileUrl(decision.bootFile, tftpServer);
  return undefined;
}

/** Options 59 and (for HTTP boot) 16 of a reply to `client`. */
export function bootOptions(client: Client6Info, url: string | undefined): Dhcp6OptionTlv[] {
  if (url === undefined) return [];
  const out = [bootFileUrlOption(url)];
  if (client.isHttpClient && !client.isIpxe) out.push(vendorClassOption({ enterprise: PXE_ENTERPRISE, data: ['HTTPClient'] }));
  return out;
}
