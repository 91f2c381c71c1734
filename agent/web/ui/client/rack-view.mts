/**
 * @module The rack view (`/`): one tile per host — name, description, state, power, error
 * badge, the lifecycle step indicator — with counts per state, filters (state, errors only,
 * discovered only, text; kept in the URL query so a filtered view can be shared), and the
 * service panels. A discovered host waiting for its BMC shows the BMC in-band enlistment
 * proposed and an Enroll button (enroll.mts). Live:
 * an event about a host refetches that host; a reconnect or every 10 s refetches everything
 * (power changes have no event).
 */
import type { BareMetalHost } from '../../../host/types.js';
import { PROVISIONING_STATES } from '../../../host/types.js';
import { normalizeBootMac } from '../../../store/host-mac-index.js';
import { categoryOf, countHosts, hostDescription, hostMatches, isDiscovered, lifecycleProgress, proposedBmc, sortHosts, stateLabel, type RackFilter } from '../host-model.js';
import { foldBootTransport, summarizeBootTransport, type HostBootTransport } from '../boot-transport.js';
import { api } from './api.mjs';
import { ACTION_DONE_EVENT } from './dialogs.mjs';
import { h, setChildren, toast } from './dom.mjs';
import { openEnrollDialog } from './enroll.mjs';
import { LiveStream } from './live.mjs';
import { renderPanels } from './panels.mjs';

/** Full refresh: host changes without an event (power state) and the panels. */
const REFRESH_MS = 10_000;

/** The step indicator (compact, on tiles). */
export function stepIndicator(host: BareMetalHost, large: boolean): HTMLElement {
  const progress = lifecycleProgress(host);
  const list = h('ol', { class: large ? 'steps steps-large' : 'steps', 'aria-label': progress.summary },
    progress.steps.map((step) => h('li', { 'data-status': step.status, ...(large ? {} : { title: `${step.label}: ${step.status}` }) }, large ? step.label : h('span', { class: 'visually-hidden' }, `${step.label}: ${step.status}`))));
  // The large indicator's labels give way to this line on phones.
  return h('div', {}, list, h('div', { class: 'step-text', 'aria-hidden': large ? 'true' : null }, progress.summary));
}

/** The state badge. */
export function stateBadge(host: BareMetalHost): HTMLElement {
  const label = stateLabel(host.status.provisioning.state);
  const status = host.status.operationalStatus;
  const detached = status === 'detached' || status === 'servicing' ? ` · ${status}` : '';
  return h('span', { class: 'badge', 'data-category': categoryOf(host), 'data-testid': 'state' }, `${label}${detached}`);
}

/** Power as text with a dot (`On` / `Off`). */
export function powerLabel(host: BareMetalHost): HTMLElement {
  return h('span', { class: 'power', 'data-on': String(host.status.poweredOn), 'data-testid': 'power' }, h('span', { class: 'visually-hidden' }, 'Power: '), host.status.poweredOn ? 'On' : 'Off');
}

/** A discovered host's proposed BMC and its Enroll button. */
function discoveredLine(host: BareMetalHost): HTMLElement {
  const proposed = proposedBmc(host);
  const enroll = h('button', { type: 'button', class: 'btn', 'data-testid': 'enroll' }, 'Enroll…');
  enroll.addEventListener('click', () => { openEnrollDialog(host); });
  return h('div', { class: 'tile-discovered', 'data-testid': 'discovered' },
    h('span', { 'data-testid': 'proposed-bmc' }, proposed === '' ? 'No BMC found in-band' : ['Proposed BMC ', h('span', { class: 'mono' }, proposed)]),
    enroll);
}

/** The boot-transport badge (`HTTPS`, `HTTP`, `TFTP`; docs/https-boot.md), or nothing before a recorded boot. */
export function transportBadge(record: HostBootTransport | undefined): HTMLElement[] {
  const summary = summarizeBootTransport(record);
  if (summary.kind === 'unknown') return [];
  return [h('span', { class: 'transport', 'data-transport': summary.kind, 'data-testid': 'boot-transport', title: summary.detail }, h('span', { class: 'visually-hidden' }, 'Last boot over: '), summary.label)];
}

/** A host's boot MAC as the flight recorder keys it (the store's {@link normalizeBootMac}). */
export function bootMacOf(host: BareMetalHost): string | undefined {
  const mac = host.spec.bootMACAddress;
  return mac === undefined ? undefined : normalizeBootMac(mac);
}

function tileContent(host: BareMetalHost, transport: HostBootTransport | undefined): HTMLElement[] {
  const name = host.metadata.name;
  const description = hostDescription(host);
  const error = host.status.errorMessage;
  return [
    h('div', { class: 'tile-head' }, h('h3', { class: 'tile-name' }, h('a', { href: `/hosts/${encodeURIComponent(name)}` }, name)), stateBadge(host)),
    ...(description === '' ? [] : [h('div', { class: 'tile-desc', title: description }, description)]),
    h('div', { class: 'tile-meta' }, powerLabel(host), h('span', { class: 'mono' }, host.spec.bootMACAddress ?? 'no boot MAC'), transportBadge(transport)),
    stepIndicator(host, false),
    ...(isDiscovered(host) ? [discoveredLine(host)] : []),
    ...(error === '' && categoryOf(host) !== 'error'
      ? []
      : [h('div', { class: 'tile-error', 'data-testid': 'error' }, h('strong', {}, `${host.status.errorType === undefined || host.status.errorType === '' ? 'error' : host.status.errorType}: `), error || 'no message')]),
  ];
}

function filterFromUrl(): RackFilter {
  const q = new URLSearchParams(window.location.search);
  return { text: q.get('q') ?? '', state: q.get('state') ?? '', errorsOnly: q.get('errors') === '1', discoveredOnly: q.get('discovered') === '1' };
}

function filterToUrl(f: RackFilter): void {
  const q = new URLSearchParams();
  if (f.text !== '') q.set('q', f.text);
  if (f.state !== '') q.set('state', f.state);
  if (f.errorsOnly) q.set('errors', '1');
  if (f.discoveredOnly === true) q.set('discovered', '1');
  const query = q.toString();
  window.history.replaceState(null, '', query === '' ? '/' : `/?${query}`);
}

/** Mounts the rack view into `main`. */
export async function mountRackView(main: HTMLElement): Promise<void> {
  const hosts = new Map<string, BareMetalHost>();
  const transports = new Map<string, HostBootTransport>();
  const tiles = new Map<string, HTMLLIElement>();
  const filter = filterFromUrl();
  const summary = h('ul', { class: 'summary', 'aria-label': 'Hosts per state' });
  const search = h('input', { id: 'filter-text', type: 'search', placeholder: 'name, MAC, BMC, error…', value: filter.text });
  const stateSelect = h('select', { id: 'filter-state' });
  const errorsOnly = h('input', { id: 'filter-errors', type: 'checkbox', ...(filter.errorsOnly ? { checked: true } : {}) });
  const count = h('span', { class: 'result-count', role: 'status' });
  const list = h('ul', { class: 'tiles', id: 'tiles', 'aria-label': 'Hosts' });
  const panels = h('aside', { class: 'panels', 'aria-label': 'Agent services' });
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter hosts' },
    h('div', { class: 'field' }, h('label', { for: 'filter-text' }, 'Search'), search),
    h('div', { class: 'field' }, h('label', { for: 'filter-state' }, 'State'), stateSelect),
    h('label', { class: 'field-check', for: 'filter-errors' }, errorsOnly, 'Errors only'),
    count);
  form.addEventListener('submit', (e) => { e.preventDefault(); });
  setChildren(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Rack')),
    h('div', { class: 'rack-layout' }, h('section', { 'aria-label': 'Hosts' }, summary, form, list), panels));

  const render = (): void => {
    const all = sortHosts([...hosts.values()]);
    const counts = countHosts(all, PROVISIONING_STATES);
    const chip = (label: string, n: number, pressed: boolean, onClick: () => void, testid: string): HTMLElement =>
      h('li', {}, h('button', { type: 'button', class: 'chip', 'aria-pressed': String(pressed), 'data-testid': testid, onclick: onClick }, label, ' ', h('strong', {}, n)));
    setChildren(summary,
      chip('All', counts.total, filter.state === '' && !filter.errorsOnly && filter.discoveredOnly !== true, () => { filter.state = ''; filter.errorsOnly = false; filter.discoveredOnly = false; sync(); }, 'count-all'),
      counts.byState.map((c) => chip(stateLabel(c.state), c.count, filter.state === c.state, () => { filter.state = filter.state === c.state ? '' : c.state; sync(); }, `count-${stateLabel(c.state)}`)),
      chip('Errors', counts.errors, filter.errorsOnly, () => { filter.errorsOnly = !filter.errorsOnly; sync(); }, 'count-errors'),
      // Like the state chips, shown only when there are some (or while it filters).
      counts.discovered > 0 || filter.discoveredOnly === true
        ? chip('Discovered', counts.discovered, filter.discoveredOnly === true, () => { filter.discoveredOnly = filter.discoveredOnly !== true; sync(); }, 'count-discovered')
        : []);
    const options = ['', ...counts.byState.map((c) => c.state as string)];
    if (filter.state !== '' && !options.includes(filter.state)) options.push(filter.state);
    setChildren(stateSelect, options.map((s) => h('option', { value: s, ...(s === filter.state ? { selected: true } : {}) }, s === '' ? 'Any state' : s)));
    errorsOnly.checked = filter.errorsOnly;
    const shown = all.filter((host) => hostMatches(host, filter));
    count.textContent = `${shown.length} of ${all.length} hosts`;
    const focused = document.activeElement;
    const focusedName = focused instanceof HTMLElement ? focused.closest('li.tile')?.getAttribute('data-host') : undefined;
    for (const [name, tile] of tiles) if (!hosts.has(name)) { tile.remove(); tiles.delete(name); }
    const ordered = shown.map((host) => {
      const name = host.metadata.name;
      let tile = tiles.get(name);
      if (tile === undefined) {
        tile = h('li', { class: 'tile', 'data-host': name });
        tiles.set(name, tile);
      }
      tile.dataset.category = categoryOf(host);
      tile.dataset.state = host.status.provisioning.state;
      const mac = bootMacOf(host);
      setChildren(tile, tileContent(host, mac === undefined ? undefined : transports.get(mac)));
      return tile;
    });
    setChildren(list, ordered.length === 0 ? h('li', { class: 'empty' }, all.length === 0 ? 'No hosts yet. Apply a BareMetalHost manifest with rackside apply -f.' : 'No host matches the filters.') : ordered);
    if (focusedName !== undefined && focusedName !== null) tiles.get(focusedName)?.querySelector('a')?.focus();
  };
  const sync = (): void => {
    filterToUrl(filter);
    render();
  };
  search.addEventListener('input', () => { filter.text = search.value; sync(); });
  stateSelect.addEventListener('change', () => { filter.state = stateSelect.value; sync(); });
  errorsOnly.addEventListener('change', () => { filter.errorsOnly = errorsOnly.checked; sync(); });

  const refreshPanels = async (): Promise<void> => {
    const [report, syncStatus] = await Promise.all([api.status().catch(() => undefined), api.sync().catch(() => undefined)]);
    setChildren(panels, renderPanels(report, syncStatus));
  };
  let lastSignature = '';
  const refreshAll = async (): Promise<void> => {
    const [list, boots] = await Promise.all([api.listHosts(), api.bootTransports().catch(() => [])]);
    const signature = [...list.map((x) => `${x.metadata.name}@${x.metadata.resourceVersion}`), ...boots.map((b) => `${b.mac}@${b.boot?.at ?? ''}/${b.ramdisk?.at ?? ''}`)].join(',');
    if (signature !== lastSignature) {
      lastSignature = signature;
      hosts.clear();
      for (const host of list) hosts.set(host.metadata.name, host);
      transports.clear();
      for (const boot of boots) transports.set(boot.mac, boot);
      render();
    }
    await refreshPanels();
  };
  const pending = new Map<string, number>();
  const refreshHost = (name: string): void => {
    window.clearTimeout(pending.get(name));
    pending.set(name, window.setTimeout(() => {
      pending.delete(name);
      api.getHost(name).then(
        (host) => {
          if (hosts.get(name)?.metadata.resourceVersion === host.metadata.resourceVersion) return;
          hosts.set(name, host);
          lastSignature = '';
          render();
        },
        (error: unknown) => {
          if (error instanceof Error && 'status' in error && error.status === 404) { hosts.delete(name); render(); }
        },
      );
    }, 150));
  };

  const [latest] = await api.latestEvents(1);
  await refreshAll();
  const live = new LiveStream({
    afterSeq: latest?.seq ?? 0,
    onEvent: (event) => {
      if (event.mac !== undefined) {
        // A boot step moves the host's transport badge now, not at the next full refresh.
        const before = transports.get(event.mac) ?? { mac: event.mac };
        const after = foldBootTransport(before, event);
        if (after !== before) { transports.set(event.mac, after); lastSignature = ''; render(); }
      }
      if (event.host !== undefined) refreshHost(event.host);
    },
    onReconnected: () => { refreshAll().catch((e: unknown) => { toast(`Refresh failed: ${String(e)}`, 'error'); }); },
  });
  live.start();
  document.addEventListener(ACTION_DONE_EVENT, () => { refreshAll().catch(() => undefined); });
  window.setInterval(() => { refreshAll().catch(() => undefined); }, REFRESH_MS);
}
