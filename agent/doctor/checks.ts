/**
 * @module `rackside doctor`'s decisions about the config and the provisioning network: does the
 * config parse, does the provisioning interface exist with the configured address, are the
 * boot ports (DHCP 67, TFTP 69, proxyDHCP 4011, boot HTTP) free or held by rackside, and does
 * another DHCP server answer on the segment, and may the DHCP sockets get their receive buffer.
 * Each function turns probe results into table lines;
 * host-level checks (assets, state dir, clock, controller, BMCs) are in checks-host.ts.
 * @pure
 */
import { DEFAULT_RECEIVE_BUFFER_BYTES } from '../../bootsvc/index.js';
import type { Config } from '../config.js';
import type { CheckResult, ConfigProbe, DhcpOffer, DhcpProbe, InterfaceProbe, PortHolder, PortProbe } from './types.js';

/** Verdict on the config file. A missing or invalid config fails; the other checks then run on defaults. */
export function checkConfig(probe: ConfigProbe): CheckResult {
  const check = 'config';
  switch (probe.state) {
    case 'ok':
      return { check, status: 'ok', detail: `${probe.path} parses (provisioner ${probe.config.provisioner}, dhcp.mode ${probe.config.dhcp.mode})`, fix: '' };
    case 'missing':
      return {
        check, status: 'fail', detail: `${probe.path} does not exist`,
        fix: `cp /etc/rackside/rackside.yaml.example ${probe.path} and edit it (scripts/install.sh installs the example)`,
      };
    case 'unreadable':
      return { check, status: 'fail', detail: `cannot read ${probe.path}: ${probe.error}`, fix: `check the file's permissions (the agent reads it as user rackside)` };
    case 'invalid':
      return { check, status: 'fail', detail: probe.error.replaceAll('\n', ' '), fix: `correct the keys named above in ${probe.path} (docs/rackside.example.yaml documents every key)` };
  }
}

/** True when an IPv4 address is among the interface's addresses. */
function hasAddress(probe: InterfaceProbe, address: string): boolean {
  return probe.addresses.some((a) => a.address === address);
}

function listAddresses(probe: InterfaceProbe): string {
  return probe.addresses.length === 0 ? 'no IPv4 address' : probe.addresses.map((a) => `${a.address}/${a.prefixLength}`).join(', ');
}

/**
 * Verdict on the provisioning interface: it must exist, be administratively up, and carry
 * `provisioning.address` (with the configured prefix, else a warning); no carrier is a warning
 * (the agent serves; hosts wait for the link). Without a configured
 * interface the check is skipped when DHCP is off (another server points hosts at rackside).
 */
export function checkInterface(config: Config, probe: InterfaceProbe | undefined): CheckResult {
  const check = 'provisioning interface';
  const { interface: name, address, prefixLength } = config.provisioning;
  if (name === undefined || probe === undefined) {
    return config.dhcp.mode === 'off'
      ? { check, status: 'skip', detail: 'provisioning.interface not set (dhcp.mode off)', fix: '' }
      : { check, status: 'fail', detail: 'provisioning.interface not set', fix: 'set provisioning.interface and provisioning.address in the config' };
  }
  if (!probe.exists) {
    return { check, status: 'fail', detail: `interface ${name} not found`, fix: `list interfaces with "ip -br link" and set provisioning.interface to the one on the provisioning network` };
  }
  if (probe.adminUp === false) {
    return { check, status: 'fail', detail: `${name} is administratively down (${listAddresses(probe)})`, fix: `ip link set ${name} up, and make it permanent (/etc/network/interfaces or systemd-networkd)` };
  }
  if (address === undefined) {
    return { check, status: 'warn', detail: `${name} exists (${listAddresses(probe)}); provisioning.address not set`, fix: 'set provisioning.address to this agent\'s address on the interface' };
  }
  const cidr = `${address}/${prefixLength ?? 24}`;
  if (!hasAddress(probe, address)) {
    return {
      check, status: 'fail', detail: `${name} has ${listAddresses(probe)}, not ${address}`,
      fix: `ip addr add ${cidr} dev ${name}, and make it permanent (/etc/network/interfaces or systemd-networkd)`,
    };
  }
  const onIface = probe.addresses.find((a) => a.address === address);
  if (prefixLength !== undefined && onIface !== undefined && onIface.prefixLength !== prefixLength) {
    return {
      check, status: 'warn', detail: `${name} has ${address}/${onIface.prefixLength}, the config says /${prefixLength}`,
      fix: `make provisioning.address and the interface agree (ip addr replace ${cidr} dev ${name})`,
    };
  }
  if (probe.operState === 'down' || probe.operState === 'lowerlayerdown') {
    // Up but no carrier: the agent binds and serves; hosts reach it once a link (or a bridge port) comes up.
    return {
      check, status: 'warn', detail: `${name} has ${address} but no carrier (operstate ${probe.operState}): no host can reach it until a link comes up`,
      fix: `check the cable and switch port of ${name}; a bridge has carrier once one of its ports has`,
    };
  }
  const state = probe.operState === undefined ? '' : ` (${probe.operState})`;
  return { check, status: 'ok', detail: `${name}${state} has ${address}${probe.mac === undefined ? '' : `, MAC ${probe.mac}`}`, fix: '' };
}

/** A port the agent binds, and whether this config needs it. */
export interface PortNeed {
  label: string;
  protocol: 'udp' | 'tcp';
  address: string;
  port: number;
  needed: boolean;
}

/** The ports to test for this config: DHCP 67 and proxyDHCP 4011 (needed unless dhcp.mode is off), TFTP, boot HTTP, boot HTTPS with `http.tls`. */
export function portsToCheck(config: Config): PortNeed[] {
  const dhcp = config.dhcp.mode !== 'off';
  return [
    { label: 'port 67/udp (DHCP)', protocol: 'udp', address: '0.0.0.0', port: 67, needed: dhcp },
    { label: `port ${config.tftp.listen.port}/udp (TFTP)`, protocol: 'udp', address: config.tftp.listen.host, port: config.tftp.listen.port, needed: true },
    { label: 'port 4011/udp (proxyDHCP)', protocol: 'udp', address: '0.0.0.0', port: 4011, needed: dhcp },
    { label: `port ${config.http.listen.port}/tcp (boot HTTP)`, protocol: 'tcp', address: config.http.listen.host, port: config.http.listen.port, needed: true },
    ...(config.http.tls === undefined ? [] : [{ label: `port ${config.http.tls.port}/tcp (boot HTTPS)`, protocol: 'tcp' as const, address: config.http.listen.host, port: config.http.tls.port, needed: true }]),
  ];
}

/** True when a socket holder is a rackside agent (its command line runs rackside's cli.js or the wrapper). */
export function isRacksideHolder(holder: PortHolder): boolean {
  const text = `${holder.command} ${holder.cmdline ?? ''}`;
  return /rackside|dist\/agent\/cli\.js/.test(text);
}

function describeHolder(h: PortHolder): string {
  const who = `${h.command}${h.pid === undefined ? '' : ` (pid ${h.pid})`}`;
  return h.device === undefined ? who : `${who} on ${h.device}`;
}

/**
 * Verdict on one port. Free or held by rackside is ok. Held by another process fails when the
 * config needs the port — unless that process is bound to another interface (SO_BINDTODEVICE)
 * than the provisioning one, which can coexist with rackside's interface-bound DHCP sockets.
 */
export function checkPort(need: PortNeed, probe: PortProbe, provisioningInterface?: string): CheckResult {
  const check = need.label;
  const where = `${need.address}:${need.port}`;
  if (probe.bind === 'free') return { check, status: 'ok', detail: `${where} is free`, fix: '' };
  const ours = probe.holders.filter(isRacksideHolder);
  const others = probe.holders.filter((h) => !isRacksideHolder(h));
  if (others.length === 0 && ours.length > 0) {
    return { check, status: 'ok', detail: `held by rackside: ${ours.map(describeHolder).join(', ')}`, fix: '' };
  }
  if (probe.bind === 'denied' || probe.bind === 'error') {
    if (probe.holders.length === 0) {
      return {
        check, status: 'warn', detail: `cannot test ${where}: ${probe.error ?? probe.bind}; no listener seen by ss`,
        fix: probe.bind === 'denied' ? 'run rackside doctor as root to test binding' : '',
      };
    }
  }
  const elsewhere = others.length > 0 && provisioningInterface !== undefined && others.every((h) => h.device !== undefined && h.device !== provisioningInterface);
  const detail = others.length === 0 ? `${where} is in use (holder unknown${probe.error === undefined ? '' : `: ${probe.error}`})` : `${where} is held by ${others.map(describeHolder).join(', ')}`;
  if (!need.needed) return { check, status: 'skip', detail: `${detail}; not needed with this config`, fix: '' };
  if (elsewhere) return { check, status: 'ok', detail: `${detail}, not on ${provisioningInterface}`, fix: '' };
  const first = others[0];
  const stop = first === undefined
    ? `find the holder with: ss -lunpt 'sport = :${need.port}'`
    : `stop ${first.command}${first.pid === undefined ? '' : ` (pid ${first.pid})`} or move it off port ${need.port}${first.command === 'dnsmasq' ? ' (dnsmasq: port=0 disables DNS only; use dhcp-range on other interfaces, or except-interface)' : ''}`;
  return { check, status: 'fail', detail, fix: stop };
}

function isOurs(offer: DhcpOffer, ourAddresses: ReadonlySet<string>): boolean {
  return ourAddresses.has(offer.serverId ?? offer.sourceAddress);
}

/** `server 10.0.0.2 offered 10.0.0.57` (or "(proxyDHCP, no address)"), with the datagram source if it differs. */
export function describeOffer(offer: DhcpOffer): string {
  const server = offer.serverId ?? `${offer.sourceAddress} (no server id)`;
  const from = offer.serverId !== undefined && offer.serverId !== offer.sourceAddress ? ` via ${offer.sourceAddress}` : '';
  const what = offer.offeredAddress === '0.0.0.0' ? 'answered as proxyDHCP (no address)' : `offered ${offer.offeredAddress}`;
  const boot = offer.bootFile === undefined || offer.bootFile === '' ? '' : `, boot file ${offer.bootFile}`;
  return `server ${server}${from} ${what}${boot}`;
}

/**
 * Verdict on other DHCP servers. With dhcp.mode full any offer not from rackside's own
 * addresses fails: hosts would take whichever answer comes first (RFC 2131 §4.4.1 lets the
 * client pick any offer). With proxy or off another server is expected and reported.
 */
export function checkDhcpServers(config: Config, probe: DhcpProbe, ourAddresses: readonly string[]): CheckResult {
  const check = 'other DHCP servers';
  if (probe.state === 'not-run') return { check, status: 'skip', detail: probe.reason, fix: '' };
  if (probe.state === 'error') {
    return { check, status: 'warn', detail: `DISCOVER probe failed: ${probe.error}`, fix: 'run rackside doctor as root (it binds UDP 68 and broadcasts)' };
  }
  const ours = new Set(ourAddresses);
  const foreign = dedupeOffers(probe.offers.filter((o) => !isOurs(o, ours)));
  const own = probe.offers.filter((o) => isOurs(o, ours)).length;
  const ownNote = own > 0 ? `; rackside itself answered` : '';
  const seconds = (probe.listenMs / 1000).toFixed(1);
  if (foreign.length === 0) {
    return { check, status: 'ok', detail: `no other DHCP server answered a DISCOVER on ${probe.interface} within ${seconds}s${ownNote}`, fix: '' };
  }
  const found = foreign.map(describeOffer).join('; ');
  if (config.dhcp.mode === 'full') {
    return {
      check, status: 'fail', detail: `rogue DHCP on ${probe.interface}: ${found}`,
      fix: `stop the DHCP server at ${foreign.map((o) => o.serverId ?? o.sourceAddress).join(', ')} on this segment, or set dhcp.mode: proxy to work beside it`,
    };
  }
  return { check, status: 'ok', detail: `expected with dhcp.mode ${config.dhcp.mode}: ${found}`, fix: '' };
}

/**
 * Verdict on `net.core.rmem_max`, the cap on the DHCP sockets' receive buffer: the service has
 * no CAP_NET_ADMIN to force the {@link DEFAULT_RECEIVE_BUFFER_BYTES} it asks for, so below that
 * a rack's DISCOVER burst can overflow the queue (the kernel drops them; the firmware resends
 * seconds later). Skipped with dhcp.mode off.
 */
export function checkDhcpReceiveBuffer(config: Config, rmemMax: number | undefined): CheckResult {
  const check = 'DHCP receive buffer';
  if (config.dhcp.mode === 'off') return { check, status: 'skip', detail: 'dhcp.mode is off', fix: '' };
  const wanted = DEFAULT_RECEIVE_BUFFER_BYTES;
  const fix = `sysctl -w net.core.rmem_max=${wanted}; echo 'net.core.rmem_max = ${wanted}' > /etc/sysctl.d/60-rackside.conf`;
  if (rmemMax === undefined) return { check, status: 'warn', detail: 'cannot read /proc/sys/net/core/rmem_max', fix };
  const kib = (bytes: number): string => `${Math.round(bytes / 1024)} KiB`;
  if (rmemMax < wanted) {
    return {
      check, status: 'warn',
      detail: `net.core.rmem_max is ${kib(rmemMax)}: the DHCP sockets get that instead of ${kib(wanted)}, and a burst of DISCOVERs beyond it is dropped by the kernel`,
      fix,
    };
  }
  return { check, status: 'ok', detail: `net.core.rmem_max ${kib(rmemMax)} ≥ the ${kib(wanted)} the DHCP sockets ask for`, fix: '' };
}

/** One offer per server (servers may answer twice, e.g. on retransmission). */
function dedupeOffers(offers: readonly DhcpOffer[]): DhcpOffer[] {
  const seen = new Map<string, DhcpOffer>();
  for (const o of offers) {
    const key = o.serverId ?? o.sourceAddress;
    if (!seen.has(key)) seen.set(key, o);
  }
  return [...seen.values()];
}
