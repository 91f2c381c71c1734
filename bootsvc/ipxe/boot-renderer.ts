/**
 * @module Renders the generated boot files — `/boot/<mac>.ipxe`, `/boot/boot.ipxe`,
 * `grub/grub.cfg`, `grub/<mac>.cfg` — from the agent's {@link BootLookup}, applying the
 * unknown-host policy (`ignore`: the "nothing to do" answer; `discover`: the discovery ramdisk).
 * Used by the boot HTTP server and, through its per-request hook, by TFTP, so both serve the
 * same bytes for the same name.
 * @pure
 */
import type { BootLookup } from '../boot-lookup.js';
import type { BootPlan, BootTarget, RamdiskPlan } from './boot-plan.js';
import type { BootRoute } from './boot-paths.js';
import { renderGrubConfig, renderGrubEntryConfig } from './grub.js';
import { renderEntryScript, renderIpxeScript } from './scripts.js';
import { isIpv6Address } from '../net/ip-text.js';

/** How the generated files are rendered. */
export interface BootRendererOptions {
  plans: BootLookup;
  /** Boot HTTP base URL, e.g. `http://10.0.0.1:8081`. */
  baseUrl: string;
  /** `dhcp.unknownHosts`; default `ignore`. */
  unknownHosts?: 'ignore' | 'discover';
  /** The discovery ramdisk unknown MACs boot when `unknownHosts` is `discover`. */
  discovery?: RamdiskPlan;
  /**
   * Per-MAC discovery targets when `unknownHosts` is `discover` (the agent's, with a token bound
   * to the MAC); wins over `discovery`. An `undefined` answer means the MAC was refused.
   */
  discoveryLookup?: BootLookup;
  /**
   * For clients of the other address family (IPv6 clients on a dual-stack network): a ramdisk
   * plan whose `agentUrl` starts with `from` (the IPv4 boot URL) names `to` (the bracketed IPv6
   * one) instead, so the ramdisk calls back over the family it booted with (docs/ipv6.md).
   */
  rebaseAgentUrl?: { from: string; to: string };
  /** Seconds between "nothing to do" asks (default 30) and how many asks (default 10). */
  nothingRetrySeconds?: number;
  nothingMaxAttempts?: number;
}

/** A generated boot file. */
export interface RenderedBootFile {
  body: string;
  contentType: string;
  /** The MAC it was rendered for, when per-MAC. */
  mac?: string;
  host?: string;
  /** What it tells the client to do (`entry` for the MAC-independent entry files). */
  planKind: BootPlan['kind'] | 'entry';
}

/** The generated routes {@link renderBootFile} handles. */
export type GeneratedBootRoute = Extract<BootRoute, { kind: 'ipxe-script' | 'ipxe-entry' | 'grub-entry' | 'grub-config' }>;

/** True when `route` names a generated file. */
export function isGeneratedRoute(route: BootRoute): route is GeneratedBootRoute {
  return route.kind === 'ipxe-script' || route.kind === 'ipxe-entry' || route.kind === 'grub-entry' || route.kind === 'grub-config';
}

const IPXE_TYPE = 'text/plain; charset=utf-8';
const GRUB_TYPE = 'text/plain; charset=utf-8';

/** The target for `mac`, with the unknown-host policy applied. */
export async function resolveBootTarget(mac: string, options: BootRendererOptions): Promise<BootTarget> {
  const target = await options.plans.target({ mac });
  if (target !== undefined) return target;
  if (options.unknownHosts === 'discover') {
    if (options.discoveryLookup !== undefined) {
      const discovered = await options.discoveryLookup.target({ mac });
      return discovered ?? { plan: { kind: 'none', message: 'unknown MAC; discovery refused it for now (the agent\'s discovery limits are reached)' } };
    }
    if (options.discovery !== undefined) return { plan: options.discovery };
    return { plan: { kind: 'none', message: 'unknown MAC; discovery is on but no discovery ramdisk is configured' } };
  }
  return { plan: { kind: 'none', message: 'not a known host (no host has this bootMACAddress); it boots once one does' } };
}

/**
 * The renderer's URLs for a client at `clientAddress` (its address, or the server address it
 * reached): an IPv6 client (not IPv4-mapped) gets `url6` as the base URL and ramdisk plans whose
 * callback URL on `url` is rebased onto `url6`, so the ramdisk calls back over the family it
 * booted with (docs/ipv6.md); any other client, or no `url6`, gets `url`.
 */
export function familyUrls(clientAddress: string, url: string, url6: string | undefined): Pick<BootRendererOptions, 'baseUrl' | 'rebaseAgentUrl'> {
  if (url6 === undefined || !isIpv6Address(clientAddress)) return { baseUrl: url };
  return { baseUrl: url6, rebaseAgentUrl: { from: url, to: url6 } };
}

/** `target` with its ramdisk plan's agent URL rebased per `options.rebaseAgentUrl`. */
export function rebasedTarget(target: BootTarget, options: Pick<BootRendererOptions, 'rebaseAgentUrl'>): BootTarget {
  const r = options.rebaseAgentUrl;
  const from = r?.from.replace(/\/+$/, '');
  if (r === undefined || from === undefined || target.plan.kind !== 'ramdisk') return target;
  const url = target.plan.agentUrl;
  if (url !== from && !url.startsWith(`${from}/`)) return target;
  return { ...target, plan: { ...target.plan, agentUrl: `${r.to.replace(/\/+$/, '')}${url.slice(from.length)}` } };
}

/**
 * Renders a generated boot file. `attempt` is the "nothing to do" ask counter from the script
 * URL's query. Throws BootRenderError for values that cannot be rendered safely, and passes on
 * rejections of the plan source.
 */
export async function renderBootFile(route: GeneratedBootRoute, options: BootRendererOptions, attempt?: number): Promise<RenderedBootFile> {
  switch (route.kind) {
    case 'ipxe-entry':
      return { body: renderEntryScript(options.baseUrl), contentType: IPXE_TYPE, planKind: 'entry' };
    case 'grub-entry':
      return { body: renderGrubEntryConfig(), contentType: GRUB_TYPE, planKind: 'entry' };
    case 'ipxe-script': {
      const target = rebasedTarget(await resolveBootTarget(route.mac, options), options);
      const body = renderIpxeScript(target.plan, {
        mac: route.mac,
        ...(target.host === undefined ? {} : { host: target.host }),
        baseUrl: options.baseUrl,
        ...(options.nothingRetrySeconds === undefined || target.plan.kind !== 'none' ? {} : { retrySeconds: options.nothingRetrySeconds }),
        ...(options.nothingMaxAttempts === undefined ? {} : { maxAttempts: options.nothingMaxAttempts }),
        ...(attempt === undefined ? {} : { attempt }),
      });
      return { body, contentType: IPXE_TYPE, mac: route.mac, ...(target.host === undefined ? {} : { host: target.host }), planKind: target.plan.kind };
    }
    case 'grub-config': {
      const target = rebasedTarget(await resolveBootTarget(route.mac, options), options);
      const body = renderGrubConfig(target.plan, { mac: route.mac, ...(target.host === undefined ? {} : { host: target.host }) });
      return { body, contentType: GRUB_TYPE, mac: route.mac, ...(target.host === undefined ? {} : { host: target.host }), planKind: target.plan.kind };
    }
  }
}
