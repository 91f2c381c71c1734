/**
 * @module The rack view's service panels: boot services, BMC reachability, image downloads
 * (from the optional `GET /api/v1/status`, see status-report.ts), controller sync (`GET
 * /api/v1/sync`) and the SSH server/tunnel. A section the agent does not report yet reads
 * "Not configured" rather than pretending to be healthy.
 */
import { downloadFraction, formatBytes, formatRate, type AgentStatusReport, type DhcpServiceStatus, type RamdiskBuildReport, type TransferServiceStatus } from '../status-report.js';
import { h, timeElement, type Child } from './dom.mjs';

type Health = 'ok' | 'bad' | 'warn' | 'off';

function health(kind: Health, text: string): HTMLElement {
  return h('span', { class: 'health', 'data-health': kind }, text);
}

function panel(id: string, title: string, badge: HTMLElement | null, ...body: Child[]): HTMLElement {
  return h('section', { class: 'panel', id, 'aria-labelledby': `${id}-title` }, h('h2', { id: `${id}-title` }, title, badge), ...body);
}

function notConfigured(text: string): HTMLElement {
  return h('p', { class: 'not-configured' }, text);
}

function rows(entries: readonly (readonly [string, Child])[]): HTMLElement {
  return h('dl', {}, entries.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value ?? '—')]));
}

function transfer(name: string, t: TransferServiceStatus | undefined): [string, Child][] {
  if (t === undefined) return [[name, 'not configured']];
  const rate = t.bytesPerSecond === undefined ? '' : `, ${formatRate(t.bytesPerSecond)}`;
  return [[name, `${t.healthy ? 'up' : 'DOWN'} · ${t.transfersInFlight} in flight${rate}${t.message === undefined ? '' : ` · ${t.message}`}`]];
}

function bootServices(report: AgentStatusReport | undefined): HTMLElement {
  const boot = report?.bootServices;
  if (boot === undefined) return panel('panel-boot', 'Boot services', health('off', 'not configured'), notConfigured('Not configured: DHCP, TFTP and boot HTTP report here once the agent runs them.'));
  const services = [boot.dhcp, boot.dhcp6, boot.tftp, boot.http].filter((x) => x !== undefined);
  const ramdisk = boot.ramdisk;
  // Other architectures' builds (made when a host of one needs it) get a line each.
  const others = (boot.ramdisks ?? []).filter((r) => r.arch !== undefined && r.arch !== ramdisk?.arch);
  const healthy = services.every((x) => x.healthy) && ramdisk?.state !== 'failed' && others.every((r) => r.state !== 'failed');
  return panel('panel-boot', 'Boot services', health(healthy ? 'ok' : 'bad', healthy ? 'healthy' : 'degraded'), rows([
    ['DHCP', dhcpLine(boot.dhcp)],
    ...(boot.dhcp6 === undefined ? [] : [['DHCPv6', dhcpLine(boot.dhcp6)] as const]),
    ...transfer('TFTP', boot.tftp),
    ...transfer('HTTP', boot.http),
    ['Ramdisk', ramdiskLine(ramdisk)],
    ...others.map((r) => [`Ramdisk ${r.arch ?? ''}`, ramdiskLine(r, r.arch)] as const),
  ]));
}

/** A DHCP or DHCPv6 line: mode, up or down, leases used and free, the server's note. */
function dhcpLine(dhcp: DhcpServiceStatus | undefined): string {
  if (dhcp === undefined) return 'not configured';
  const leases = dhcp.leasesUsed === undefined ? '' : ` · ${dhcp.leasesUsed} leases used${dhcp.leasesFree === undefined ? '' : `, ${dhcp.leasesFree} free`}`;
  return `${dhcp.mode}${dhcp.mode === 'off' ? '' : dhcp.healthy ? ' · up' : ' · DOWN'}${leases}${dhcp.message === undefined ? '' : ` · ${dhcp.message}`}`;
}

/** The ramdisk line: built and served, building (step, percent), or failed with the fix. */
function ramdiskLine(r: RamdiskBuildReport | undefined, otherArch?: string): Child {
  if (r === undefined) return 'not built by the agent (RACKSIDE_RAMDISK_BUILD=off or another provisioner)';
  const progress = r.state === 'building' && r.step !== undefined ? h('progress', { max: '100', value: String(r.percent ?? 0) }) : '';
  const text = r.state === 'failed' ? `FAILED · ${r.message}${r.fix === undefined ? '' : ` · fix: ${r.fix}`}` : r.message;
  return h('span', { id: otherArch === undefined ? 'ramdisk-build' : `ramdisk-build-${otherArch}`, 'data-state': r.state }, text, ' ', progress);
}

function bmc(report: AgentStatusReport | undefined): HTMLElement {
  const list = report?.bmc;
  if (list === undefined) return panel('panel-bmc', 'BMC reachability', health('off', 'not configured'), notConfigured('Not configured: BMC reachability appears here once the BMC drivers report it.'));
  const down = list.filter((b) => !b.reachable);
  return panel('panel-bmc', 'BMC reachability', health(down.length === 0 ? 'ok' : 'bad', `${list.length - down.length}/${list.length} reachable`),
    down.length === 0
      ? h('p', { class: 'not-configured' }, list.length === 0 ? 'No BMCs yet.' : 'Every BMC answers.')
      : h('ul', {}, down.map((b) => h('li', {}, h('a', { href: `/hosts/${encodeURIComponent(b.host)}` }, b.host), ` unreachable since `, timeElement(b.since), b.lastError === undefined ? '' : `: ${b.lastError}`))));
}

function images(report: AgentStatusReport | undefined): HTMLElement {
  const list = report?.images;
  if (list === undefined) return panel('panel-images', 'Image downloads', health('off', 'not configured'), notConfigured('Not configured: OS image and ramdisk downloads show progress here.'));
  const active = list.filter((d) => d.state !== 'done');
  return panel('panel-images', 'Image downloads', health(list.some((d) => d.state === 'failed') ? 'bad' : 'ok', `${active.length} active`),
    active.length === 0 ? h('p', { class: 'not-configured' }, 'No downloads in progress.') : h('ul', { class: 'findings' }, active.map((d) => {
      const fraction = downloadFraction(d);
      const percent = fraction === undefined ? undefined : Math.round(fraction * 100);
      const bar = h('span');
      bar.style.width = `${percent ?? 0}%`;
      return h('li', {},
        h('div', { class: 'mono' }, d.url),
        h('div', { class: 'progress', role: 'progressbar', 'aria-label': `Download of ${d.url}`, 'aria-valuemin': 0, 'aria-valuemax': 100, ...(percent === undefined ? {} : { 'aria-valuenow': percent }) }, bar),
        h('div', { class: 'muted' }, `${d.state} · ${formatBytes(d.bytesDone)}${d.bytesTotal === undefined ? '' : ` of ${formatBytes(d.bytesTotal)}`}${d.error === undefined ? '' : ` · ${d.error}`}`));
    })));
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function sync(status: Record<string, unknown> | undefined): HTMLElement {
  if (status === undefined) return panel('panel-sync', 'Controller sync', health('off', 'not configured'), notConfigured('Not configured: this agent has no sync status route.'));
  if (status.enabled !== true) return panel('panel-sync', 'Controller sync', health('off', 'off'), notConfigured('Not configured: no controller section in the agent config; the rack works offline.'));
  const failures = num(status.consecutiveFailures) ?? 0;
  const backlog = status.backlog as { hosts?: unknown; events?: unknown } | undefined;
  const lastError = status.lastError as { message?: unknown; at?: unknown } | null | undefined;
  return panel('panel-sync', 'Controller sync', health(failures === 0 ? 'ok' : failures < 3 ? 'warn' : 'bad', failures === 0 ? 'in sync' : `${failures} failed`), rows([
    ['Controller', str(status.url) ?? '—'],
    ['Last ack', timeElement(str(status.lastAckAt) ?? undefined)],
    ['Backlog', `${num(backlog?.hosts) ?? 0} hosts, ${num(backlog?.events) ?? 0} events`],
    ...(lastError === null || lastError === undefined ? [] : [['Last error', str(lastError.message) ?? ''] as [string, Child]]),
  ]));
}

function ssh(report: AgentStatusReport | undefined): HTMLElement {
  const s = report?.ssh;
  if (s === undefined) return panel('panel-ssh', 'SSH access', health('off', 'not configured'), notConfigured('Not configured: the SSH server and the reverse tunnel to the bastion report here.'));
  const tunnel = s.tunnel;
  const state = tunnel?.state ?? 'disabled';
  return panel('panel-ssh', 'SSH access', health(state === 'connected' ? 'ok' : state === 'connecting' ? 'warn' : state === 'down' ? 'bad' : 'off', `tunnel ${state}`), rows([
    ['Server', s.server === undefined ? 'off' : `${s.server.listen} · ${s.server.sessions} session${s.server.sessions === 1 ? '' : 's'}`],
    ['Tunnel', tunnel === undefined ? 'not configured' : `${tunnel.bastion} · ${tunnel.state}${tunnel.lastError === undefined ? '' : ` · ${tunnel.lastError}`}`],
  ]));
}

/** Renders every panel from what the agent reported (undefined = that route is absent). */
export function renderPanels(report: AgentStatusReport | undefined, syncStatus: Record<string, unknown> | undefined): HTMLElement[] {
  return [bootServices(report), bmc(report), images(report), sync(syncStatus), ssh(report)];
}
