/**
 * @module The DHCPv6 server's decisions (RFC 8415 §16 validation, §18.3 server behaviour):
 * a client message, its host's MAC and boot decision, and the lease table in; the reply (or
 * why there is none) and the lease changes out. Stateful IA_NA with one address per host
 * (`pool.ts`); Solicit → Advertise (or Reply with Rapid Commit, §18.3.1), Request / Renew /
 * Rebind → Reply binding the address, Confirm → on-link check, Release and Decline → Reply
 * with Success, Information-Request → Reply with options only. Relay wrapping is the server's.
 * @pure
 */
import type { BootDecision, Lease } from '../boot-lookup.js';
import type { LeaseChange } from '../dhcp/responder-context.js';
import { bootOptions, bootUrlFor } from './boot-options.js';
import { classifyClient6, type Client6Info } from './client-info.js';
import type { Dhcp6ClientMessage } from './message.js';
import { Dhcp6MessageType as T, Dhcp6Option, Dhcp6Status, firstOption, type Dhcp6OptionTlv } from './options.js';
import { addressFreeFor, chooseAddress, inRange6, type Lease6Index, type Link6 } from './pool.js';
import { decodeIaNa, dnsServersOption, iaAddresses, iaAddressOption, iaNaOption, preferenceOption, statusCodeOption, type IaNa } from './values.js';
import { inPrefix } from './address6.js';

/** Settings of the responder, fixed while the server runs. */
export interface Responder6Settings {
  /** This server's DUID (option 2). */
  serverDuid: Uint8Array;
  /** Valid and preferred lifetime of a binding (default 3600). */
  leaseSeconds: number;
  /** How long an advertised address is held for its host (default 60). */
  offerHoldSeconds: number;
  /** How long a declined address stays out of use (default 600). */
  declineQuarantineSeconds: number;
  /** Answer a Solicit with Rapid Commit by a binding Reply (§18.3.1). */
  rapidCommit: boolean;
  /** Option 23. */
  dns: readonly string[];
  /** Our address on the provisioning network: the host of `tftp://[…]/` boot URLs. */
  tftpServer: string;
}

/** One request as the responder sees it. */
export interface Responder6Context {
  settings: Responder6Settings;
  leases: Lease6Index;
  /**
   * The client's link (its prefix and range), chosen by the server from where the request came
   * (`linkOfRequest`): `undefined` when no configured range is on that link.
   */
  link: Link6 | undefined;
  /** The host's MAC (identity.ts), or `undefined` when the client could not be tied to one. */
  mac: string | undefined;
  /** The boot decision of a known host, the discovery decision of an unknown one, or `undefined` for a client to ignore. */
  bootDecision: BootDecision | undefined;
  nowMs: number;
  /** The client sent to the server's unicast address itself, not through a relay (§16; this server offers no Unicast option). */
  unicast?: boolean;
}

/** Why a message got no reply. */
export type Ignore6Reason = 'not-a-request' | 'invalid' | 'not-for-us' | 'unicast' | 'no-mac' | 'unknown-host' | 'no-range-for-link';

/** The responder's answer. */
export type Responder6Result =
  | { kind: 'reply'; message: Dhcp6ClientMessage; client: Client6Info; address?: string; bootUrl?: string; leaseChanges: LeaseChange[] }
  | { kind: 'ignore'; reason: Ignore6Reason; client?: Client6Info; leaseChanges: LeaseChange[] };

const ignore = (reason: Ignore6Reason, client?: Client6Info): Responder6Result => (client === undefined ? { kind: 'ignore', reason, leaseChanges: [] } : { kind: 'ignore', reason, client, leaseChanges: [] });

const sameBytes = (a: Uint8Array | undefined, b: Uint8Array): boolean => a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

/** RFC 8415 §16: which messages need (or must not carry) a Server Identifier, and need a Client Identifier. */
function validate(m: Dhcp6ClientMessage, serverDuid: Uint8Array): Ignore6Reason | undefined {
  const clientId = firstOption(m.options, Dhcp6Option.clientId);
  const serverId = firstOption(m.options, Dhcp6Option.serverId);
  switch (m.type) {
    case T.solicit:
    case T.confirm:
    case T.rebind:
      if (clientId === undefined) return 'invalid';
      return serverId === undefined ? undefined : 'invalid';
    case T.request:
    case T.renew:
    case T.release:
    case T.decline:
      if (clientId === undefined || serverId === undefined) return 'invalid';
      return sameBytes(serverId, serverDuid) ? undefined : 'not-for-us';
    case T.informationRequest:
      if (m.options.some((o) => o.code === Dhcp6Option.iaNa || o.code === Dhcp6Option.iaTa || o.code === Dhcp6Option.iaPd)) return 'invalid';
      return serverId === undefined || sameBytes(serverId, serverDuid) ? undefined : 'not-for-us';
    default:
      return 'not-a-request';
  }
}

/** The IA_NAs of a message. */
function iasOf(m: Dhcp6ClientMessage): IaNa[] {
  return m.options.filter((o) => o.code === Dhcp6Option.iaNa).map((o) => decodeIaNa(o.value));
}

/** A reply to `m` of `type` with the server and client identifiers first. */
function reply(m: Dhcp6ClientMessage, type: number, s: Responder6Settings, options: Dhcp6OptionTlv[]): Dhcp6ClientMessage {
  const clientId = firstOption(m.options, Dhcp6Option.clientId);
  return {
    kind: 'client', type, transactionId: m.transactionId,
    options: [{ code: Dhcp6Option.serverId, value: s.serverDuid }, ...(clientId === undefined ? [] : [{ code: Dhcp6Option.clientId, value: clientId }]), ...options],
  };
}

/** Options every reply to a known host carries after its IAs: DNS, then the boot options. */
function commonOptions(s: Responder6Settings, client: Client6Info, url: string | undefined): Dhcp6OptionTlv[] {
  return [...(s.dns.length > 0 ? [dnsServersOption(s.dns)] : []), ...bootOptions(client, url)];
}

/** The IA_NA answering `ia` with `address` (or NoAddrsAvail), listing other addresses the client named with zero lifetimes (§18.3.4). */
function answerIa(ia: IaNa, address: string | undefined, s: Responder6Settings): Dhcp6OptionTlv {
  if (address === undefined) return iaNaOption({ iaid: ia.iaid, t1: 0, t2: 0, options: [statusCodeOption(Dhcp6Status.noAddrsAvail, 'no addresses available')] });
  const stale = iaAddresses(ia).filter((a) => a.address !== address).map((a) => iaAddressOption({ address: a.address, preferredLifetime: 0, validLifetime: 0, options: [] }));
  const life = s.leaseSeconds;
  return iaNaOption({
    iaid: ia.iaid, t1: Math.floor(life / 2), t2: Math.floor((life * 4) / 5),
    options: [iaAddressOption({ address, preferredLifetime: life, validLifetime: life, options: [] }), ...stale],
  });
}

/** The lease record change for `mac` holding `address` in `state`. */
function holdChange(mac: string, address: string, state: 'offered' | 'bound', untilMs: number): LeaseChange {
  const lease: Lease = { mac, address, state, expiresAtMs: untilMs };
  return { op: 'put', lease };
}

/** Solicit, Request, Renew, Rebind: the host's address in every IA_NA; `bind` makes a binding, else an offer hold. */
function assign(m: Dhcp6ClientMessage, ctx: Responder6Context, link: Link6, mac: string, client: Client6Info, type: number, bind: boolean, extra: Dhcp6OptionTlv[]): Responder6Result {
  const s = ctx.settings;
  const ias = iasOf(m);
  const address = ias.length === 0 ? undefined : chooseAddress(link.range, ctx.leases, mac, ctx.nowMs);
  const url = bootUrlFor(client, ctx.bootDecision, s.tftpServer);
  const held = ctx.leases.byMac(mac);
  const changes: LeaseChange[] = [];
  if (address !== undefined) {
    // An Advertise never shortens a binding the host already has (its firmware solicits while its ramdisk is bound).
    const keepBound = !bind && held?.state === 'bound' && held.address === address && held.expiresAtMs > ctx.nowMs;
    if (!keepBound) changes.push(holdChange(mac, address, bind ? 'bound' : 'offered', ctx.nowMs + 1000 * (bind ? s.leaseSeconds : s.offerHoldSeconds)));
  }
  const options = [...ias.map((ia) => answerIa(ia, address, s)), ...extra, ...commonOptions(s, client, url)];
  if (type === T.advertise) options.push(preferenceOption(255));
  const out: Responder6Result = { kind: 'reply', message: reply(m, type, s, options), client, leaseChanges: changes };
  if (address !== undefined) out.address = address;
  if (url !== undefined) out.bootUrl = url;
  return out;
}

/** Confirm (§18.3.3): Success when every address named is on our link, NotOnLink otherwise; no reply without addresses. */
function confirm(m: Dhcp6ClientMessage, ctx: Responder6Context, link: Link6, client: Client6Info): Responder6Result {
  const addresses = iasOf(m).flatMap(iaAddresses).map((a) => a.address);
  if (addresses.length === 0) return ignore('invalid', client);
  const onLink = addresses.every((a) => inPrefix(a, link.prefix, link.prefixLength));
  const status = onLink ? statusCodeOption(Dhcp6Status.success, 'all addresses on link') : statusCodeOption(Dhcp6Status.notOnLink, 'not on link');
  return { kind: 'reply', message: reply(m, T.reply, ctx.settings, [status]), client, leaseChanges: [] };
}

/** Release and Decline (§18.3.7, §18.3.8): drop the host's binding for the named address; a declined one is quarantined. */
function letGo(m: Dhcp6ClientMessage, ctx: Responder6Context, mac: string, client: Client6Info): Responder6Result {
  const named = new Set(iasOf(m).flatMap(iaAddresses).map((a) => a.address));
  const held = ctx.leases.byMac(mac);
  const changes: LeaseChange[] = [];
  if (held !== undefined && named.has(held.address)) changes.push({ op: 'delete', key: mac });
  if (m.type === T.decline) {
    for (const address of named) {
      if (ctx.link === undefined || !inRange6(ctx.link.range, address) || !addressFreeFor(ctx.leases, address, mac, ctx.nowMs)) continue;
      changes.push({ op: 'put', lease: { mac, address, state: 'declined', expiresAtMs: ctx.nowMs + 1000 * ctx.settings.declineQuarantineSeconds } });
    }
  }
  const status = statusCodeOption(Dhcp6Status.success, m.type === T.decline ? 'declined' : 'released');
  return { kind: 'reply', message: reply(m, T.reply, ctx.settings, [status]), client, leaseChanges: changes };
}

/**
 * A message unicast by the client itself (§16): Solicit, Confirm, Rebind and Information-Request
 * are discarded; Request, Renew, Release and Decline get a Reply with UseMulticast (§18.3.2).
 */
function unicastAnswer(m: Dhcp6ClientMessage, ctx: Responder6Context, client: Client6Info): Responder6Result {
  if (m.type !== T.request && m.type !== T.renew && m.type !== T.release && m.type !== T.decline) return ignore('unicast', client);
  return { kind: 'reply', message: reply(m, T.reply, ctx.settings, [statusCodeOption(Dhcp6Status.useMulticast, 'use multicast')]), client, leaseChanges: [] };
}

/** Information-Request (§18.3.6): options only — DNS and the boot options. */
function informationReply(m: Dhcp6ClientMessage, ctx: Responder6Context, client: Client6Info): Responder6Result {
  const url = bootUrlFor(client, ctx.bootDecision, ctx.settings.tftpServer);
  const out: Responder6Result = { kind: 'reply', message: reply(m, T.reply, ctx.settings, commonOptions(ctx.settings, client, url)), client, leaseChanges: [] };
  if (url !== undefined) out.bootUrl = url;
  return out;
}

/** Decides the answer to one client message. Never throws on a message the decoder accepted. */
export function respond6(m: Dhcp6ClientMessage, ctx: Responder6Context): Responder6Result {
  const invalid = validate(m, ctx.settings.serverDuid);
  if (invalid !== undefined) return ignore(invalid);
  const client = classifyClient6(m.options);
  if (ctx.unicast === true) return unicastAnswer(m, ctx, client);
  if (ctx.mac === undefined) return ignore('no-mac', client);
  if (ctx.bootDecision === undefined) return ignore('unknown-host', client);
  const { mac, link } = ctx;
  if (m.type === T.release || m.type === T.decline) return letGo(m, ctx, mac, client);
  if (m.type === T.informationRequest) return informationReply(m, ctx, client);
  if (link === undefined) return ignore('no-range-for-link', client);
  if (m.type === T.confirm) return confirm(m, ctx, link, client);
  if (m.type === T.solicit) {
    const rapid = ctx.settings.rapidCommit && m.options.some((o) => o.code === Dhcp6Option.rapidCommit);
    return rapid
      ? assign(m, ctx, link, mac, client, T.reply, true, [{ code: Dhcp6Option.rapidCommit, value: new Uint8Array(0) }])
      : assign(m, ctx, link, mac, client, T.advertise, false, []);
  }
  // Request, Renew, Rebind (validate() let no other type through).
  return assign(m, ctx, link, mac, client, T.reply, true, []);
}
