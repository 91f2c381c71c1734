/**
 * @module The fleet page (`GET /`), rendered on the server from what the fleet queries return:
 * a rack grid with state counts (offline and revoked racks flagged, each linked to the rack's own
 * status page when it reported one), hosts in error across the fleet, a host search form and its
 * results, and the latest commands with their progress. No script; every value is escaped; it
 * shows no token, no BMC address and no secret (summaries never carry them).
 * @pure
 */
import type { CommandView } from './commands.js';
import type { HostRow, RackView } from './fleet.js';

/** What the page shows. */
export interface FleetPageModel {
  racks: RackView[];
  errorHosts: HostRow[];
  /** The search, when one was asked for. */
  search?: { q: string; results: HostRow[] };
  commands: CommandView[];
  /** RFC 3339 time the page was rendered. */
  renderedAt: string;
}

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const e = escapeHtml;

function safeLink(url: string | null, label: string): string {
  if (url === null || !/^https?:\/\/[^\s"'<>]+$/.test(url)) return e(label);
  return `<a href="${e(url)}" rel="noreferrer">${e(label)}</a>`;
}

function rackCard(r: RackView): string {
  const flag = r.revoked ? '<span class="bad">revoked</span>' : r.offline ? '<span class="bad">offline</span>' : '<span class="ok">online</span>';
  const states = Object.entries(r.states).sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `<li>${e(s)} <b>${n}</b></li>`).join('');
  const backlog = r.backlog === null ? '' : ` · backlog ${r.backlog.hosts}/${r.backlog.events}`;
  return `<section class="rack${r.offline || r.revoked ? ' down' : ''}" data-rack="${e(r.name)}">
<h3>${safeLink(r.statusUrl, r.name)} ${flag}</h3>
<p>${r.hosts} hosts · ${r.errors} in error · ${r.pendingCommands} commands pending</p>
<p class="meta">last push ${e(r.lastPushAt ?? 'never')}${r.lagSeconds === null ? '' : ` · lag ${r.lagSeconds}s`}${backlog}${r.agentVersion === null ? '' : ` · ${e(r.agentVersion)}`}</p>
<ul class="states">${states}</ul>
</section>`;
}

function hostTable(rows: HostRow[], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${e(empty)}</p>`;
  const body = rows.map((h) => `<tr><td>${e(h.rack)}</td><td><a href="/hosts/${encodeURIComponent(h.rack)}/${encodeURIComponent(h.namespace)}/${encodeURIComponent(h.name)}">${e(h.namespace)}/${e(h.name)}</a></td><td>${e(h.state === '' ? 'none' : h.state)}</td><td>${e(h.bootMACAddress ?? '')}</td><td>${e(h.serialNumber ?? '')}</td><td class="err">${e(h.errorType)}${h.errorMessage === '' ? '' : `: ${e(h.errorMessage)}`}</td></tr>`).join('\n');
  return `<table><thead><tr><th>rack</th><th>host</th><th>state</th><th>MAC</th><th>serial</th><th>error</th></tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function commandTable(rows: CommandView[]): string {
  if (rows.length === 0) return '<p class="empty">No commands.</p>';
  const body = rows.map((c) => `<tr data-command="${e(c.id)}"><td>${e(c.rack)}</td><td>${e(c.kind)}</td><td>${e(c.host ?? '')}</td><td class="state-${e(c.state)}">${e(c.state)}</td><td>${e(c.createdAt)}</td><td>${e(c.error ?? c.message ?? '')}</td></tr>`).join('\n');
  return `<table><thead><tr><th>rack</th><th>command</th><th>host</th><th>state</th><th>queued</th><th>rack says</th></tr></thead><tbody>\n${body}\n</tbody></table>`;
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}h1{font-size:1.4em}.grid{display:flex;flex-wrap:wrap;gap:.8em}
.rack{border:1px solid #bbb;border-radius:6px;padding:.5em .8em;min-width:14em}.rack.down{border-color:#c33;background:#fff4f4}.rack h3{margin:.2em 0}
.ok{color:#070;font-size:.8em}.bad{color:#c00;font-size:.8em;font-weight:bold}.meta{color:#666;font-size:.85em}.states{margin:0;padding-left:1.2em;font-size:.9em}
table{border-collapse:collapse;margin:.5em 0}td,th{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left}.err{color:#a00}.empty{color:#666}`;

/** Renders the whole page. */
export function renderFleetPage(m: FleetPageModel): string {
  const offline = m.racks.filter((r) => r.offline || r.revoked).length;
  const search = m.search === undefined ? '' : `<h2>Search: ${e(m.search.q)}</h2>\n${hostTable(m.search.results, 'No host matches.')}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rackside fleet</title><meta name="viewport" content="width=device-width">
<style>${STYLE}</style></head>
<body>
<h1>rackside fleet</h1>
<p>${m.racks.length} racks (${offline} offline) · rendered ${e(m.renderedAt)}</p>
<form method="get" action="/" role="search"><input name="q" type="search" placeholder="name, MAC, serial, error text" value="${e(m.search?.q ?? '')}" aria-label="search hosts"> <button>Search</button></form>
${search}
<h2>Racks</h2>
<div class="grid">
${m.racks.map(rackCard).join('\n')}
</div>
<h2>Hosts in error</h2>
${hostTable(m.errorHosts, 'No host is in error.')}
<h2>Commands</h2>
${commandTable(m.commands)}
</body></html>
`;
}

/** Renders one host's page: its summary fields and recent events. */
export function renderHostPage(rack: string, summary: Record<string, unknown>, events: { time: string; type: string; reason: string; message: string }[]): string {
  const fields = Object.entries(summary).map(([k, v]) => `<tr><th>${e(k)}</th><td>${e(typeof v === 'string' ? v : JSON.stringify(v))}</td></tr>`).join('\n');
  const rows = events.map((ev) => `<tr><td>${e(ev.time)}</td><td>${e(ev.type)}</td><td>${e(ev.reason)}</td><td>${e(ev.message)}</td></tr>`).join('\n');
  const name = typeof summary.name === 'string' ? summary.name : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${e(rack)}/${e(name)} · rackside fleet</title><style>${STYLE}</style></head>
<body><p><a href="/">fleet</a></p><h1>${e(rack)} / ${e(name)}</h1>
<table>${fields}</table>
<h2>Events</h2>
${rows === '' ? '<p class="empty">No events.</p>' : `<table><thead><tr><th>time</th><th>type</th><th>reason</th><th>message</th></tr></thead><tbody>${rows}</tbody></table>`}
</body></html>
`;
}
