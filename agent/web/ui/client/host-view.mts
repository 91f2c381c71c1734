/**
 * @module The host page (`/hosts/<name>`): state, power and actions; the diagnosis; the
 * lifecycle steps; the boot timeline as an SVG swimlane (from `GET /hosts/:name/timeline`,
 * falling back to the host's events while that route is absent); spec, status, operation
 * history, hardware, erase records and events. Live: events about the host or its boot MAC are added as they
 * arrive and the host is refetched; the time-based parts redraw every 15 s.
 */
import type { BareMetalHost, ChecksumType, DiskFormat, Image } from '../../../host/types.js';
import type { StoredEvent } from '../../../store/types.js';
import { diagnoseHost } from '../diagnosis.js';
import { foldBootTransport, summarizeBootTransport } from '../boot-transport.js';
import { hostDescription, isDiscovered } from '../host-model.js';
import { api, ApiFailure } from './api.mjs';
import { ACTION_DONE_EVENT, openActionDialog, type FieldSpec } from './dialogs.mjs';
import { formatLocalTime, h, setChildren, toast } from './dom.mjs';
import { openEnrollDialog } from './enroll.mjs';
import { diagnosisSection, eraseRecordsSection, eventsSection, hardwareSection, historySection, section, specSection, statusSection } from './host-sections.mjs';
import type { EraseRecord } from '../../../erase/document.js';
import { LiveStream } from './live.mjs';
import { bootMacOf, powerLabel, stateBadge, stepIndicator, transportBadge } from './rack-view.mjs';
import { renderTimelineSvg, timelineLegend } from './timeline-svg.mjs';

const EVENT_LIMIT = 500;
const REDRAW_MS = 15_000;
/** Host changes without an event (power state) are picked up by polling. */
const HOST_POLL_MS = 5_000;
/** Refetches after an action, while the reconciler acts on it. */
const AFTER_ACTION_MS = [300, 1000, 2500];

interface ActionButton {
  label: string;
  /** Whether the action makes sense now (the button is disabled otherwise). */
  enabled: (host: BareMetalHost) => boolean;
  open: (host: BareMetalHost) => void;
  danger?: boolean;
}

function postAction(name: string, action: string, label: string, question: string, danger = false, fields?: FieldSpec[]): void {
  openActionDialog({
    title: `${label} ${name}?`, question, confirmLabel: label, danger, ...(fields === undefined ? {} : { fields }),
    run: async (values) => {
      const body = action === 'reboot' ? { mode: values.mode ?? 'soft' } : action === 'detach' ? {} : undefined;
      await api.hostAction(name, action, body);
      return `${label} requested for ${name}`;
    },
  });
}

function provision(host: BareMetalHost): void {
  const name = host.metadata.name;
  openActionDialog({
    title: `Provision ${name}?`,
    question: 'rackside writes this image to the host\'s root disk and powers it on. Anything on that disk is lost.',
    confirmLabel: 'Provision', danger: true,
    fields: [
      { name: 'url', label: 'Image URL', type: 'url', required: true, placeholder: 'http://images.example/debian-12.qcow2', value: host.spec.image?.url ?? '' },
      { name: 'checksum', label: 'Checksum (value or URL)', type: 'text', required: true, placeholder: 'sha256 hex or http://…/SHA256SUMS', value: host.spec.image?.checksum ?? '' },
      { name: 'checksumType', label: 'Checksum type', type: 'select', options: ['', 'sha256', 'sha512', 'md5'], value: host.spec.image?.checksumType ?? '' },
      { name: 'format', label: 'Disk format', type: 'select', options: ['', 'qcow2', 'raw', 'vdi', 'vmdk', 'live-iso'], value: host.spec.image?.format ?? '' },
    ],
    run: async (values) => {
      const fresh = await api.getHost(name);
      const image: Image = { url: values.url ?? '', checksum: values.checksum ?? '' };
      if (values.checksumType !== undefined && values.checksumType !== '') image.checksumType = values.checksumType as ChecksumType;
      if (values.format !== undefined && values.format !== '') image.format = values.format as DiskFormat;
      await api.putHost({ ...fresh, spec: { ...fresh.spec, online: true, image } });
      return `Provisioning of ${name} requested`;
    },
  });
}

function deprovision(host: BareMetalHost): void {
  const name = host.metadata.name;
  openActionDialog({
    title: `Deprovision ${name}?`, question: 'rackside removes the image from the spec; the host is cleaned and returns to available.', confirmLabel: 'Deprovision', danger: true,
    run: async () => {
      const fresh = await api.getHost(name);
      const { image: _image, ...spec } = fresh.spec;
      await api.putHost({ ...fresh, spec });
      return `Deprovisioning of ${name} requested`;
    },
  });
}

const ACTIONS: readonly ActionButton[] = [
  { label: 'Power on', enabled: (x) => !x.status.poweredOn || !x.spec.online, open: (x) => { postAction(x.metadata.name, 'power-on', 'Power on', 'Sets spec.online: the agent powers the host on through its BMC.'); } },
  { label: 'Power off', danger: true, enabled: (x) => x.status.poweredOn || x.spec.online, open: (x) => { postAction(x.metadata.name, 'power-off', 'Power off', 'Clears spec.online: the agent powers the host off through its BMC. Running workloads stop.', true); } },
  { label: 'Reboot', danger: true, enabled: () => true, open: (x) => { postAction(x.metadata.name, 'reboot', 'Reboot', 'Powers the host off and on again through its BMC.', true, [{ name: 'mode', label: 'Mode', type: 'select', options: ['soft', 'hard'], value: 'soft', hint: 'soft asks the OS to shut down first; hard cuts power.' }]); } },
  { label: 'Inspect', enabled: (x) => ['available', 'ready', 'inspecting', 'match profile', 'preparing'].includes(x.status.provisioning.state), open: (x) => { postAction(x.metadata.name, 'inspect', 'Inspect', 'Boots the host into the ramdisk and re-reads its hardware inventory.'); } },
  { label: 'Provision…', danger: true, enabled: (x) => x.status.provisioning.state === 'available' || x.status.provisioning.state === 'ready' || x.status.provisioning.state === 'provisioned', open: provision },
  { label: 'Deprovision', danger: true, enabled: (x) => x.spec.image !== undefined, open: deprovision },
  { label: 'Detach', enabled: (x) => x.status.operationalStatus !== 'detached', open: (x) => { postAction(x.metadata.name, 'detach', 'Detach', 'The agent stops managing the host (it keeps running as it is).'); } },
  { label: 'Attach', enabled: (x) => x.status.operationalStatus === 'detached', open: (x) => { postAction(x.metadata.name, 'attach', 'Attach', 'The agent manages the host again.'); } },
  { label: 'Enroll…', enabled: isDiscovered, open: openEnrollDialog },
];

/** Mounts the host page for `name` into `main`. */
export async function mountHostView(main: HTMLElement, name: string): Promise<void> {
  document.title = `${name} · rackside`;
  let host: BareMetalHost;
  try {
    host = await api.getHost(name);
  } catch (error: unknown) {
    setChildren(main, h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' }, h('ol', {}, h('li', {}, h('a', { href: '/' }, 'Rack')))),
      h('h1', {}, name), h('p', { class: 'notice' }, error instanceof ApiFailure && error.status === 404 ? `No host named ${name}.` : `Could not load the host: ${String(error)}`));
    return;
  }
  const timeline = await api.hostTimeline(name, EVENT_LIMIT);
  let eraseRecords: EraseRecord[] = await api.eraseRecords(name).catch(() => []);
  const events = new Map<number, StoredEvent>(timeline.events.map((e) => [e.seq, e]));
  const head = h('div', { class: 'page-head' });
  const buttons = ACTIONS.map((action) => {
    const button = h('button', { type: 'button', class: action.danger === true ? 'btn btn-danger' : 'btn' }, action.label);
    button.addEventListener('click', () => { action.open(host); });
    return { action, button };
  });
  const actionBar = h('div', { class: 'actions', role: 'group', 'aria-label': 'Host actions' }, buttons.map((b) => b.button));
  const diagnosis = h('div', { class: 'span-all' });
  const progress = section('progress', 'Lifecycle');
  const timelineBox = h('div', { class: 'timeline-scroll' });
  const timelineNote = h('p', { class: 'muted' });
  const transportLine = h('p', { 'data-testid': 'boot-transport-detail' });
  const details = h('div', { class: 'host-layout details' });
  const eventsBox = h('div', { class: 'events-box' });
  setChildren(main,
    h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' }, h('ol', {}, h('li', {}, h('a', { href: '/' }, 'Rack')), h('li', { 'aria-current': 'page' }, name))),
    head, actionBar, h('div', { class: 'host-layout' },
      diagnosis,
      h('div', { class: 'span-all' }, progress),
      h('div', { class: 'span-all' }, section('timeline', 'Boot timeline', transportLine, timelineBox, timelineLegend(), timelineNote))),
    details, eventsBox);

  /** The parts that depend on the events and the clock: diagnosis, timeline, events table. */
  const renderEventParts = (): void => {
    const nowMs = Date.now();
    const list = [...events.values()];
    setChildren(diagnosis, diagnosisSection(diagnoseHost({ host, events: list, nowMs, formatTime: formatLocalTime }), nowMs));
    setChildren(timelineBox, renderTimelineSvg(list, nowMs, name));
    const bootMac = bootMacOf(host);
    const transport = bootMac === undefined ? undefined : [...list].sort((a, b) => a.seq - b.seq).filter((e) => e.mac === bootMac).reduce(foldBootTransport, { mac: bootMac });
    const summary = summarizeBootTransport(transport);
    setChildren(transportLine, summary.kind === 'unknown' ? [] : [...transportBadge(transport), ' ', summary.detail]);
    timelineNote.textContent = timeline.source === 'timeline'
      ? 'From the flight recorder (DHCP, TFTP, HTTP, ramdisk, BMC) and the host controller.'
      : 'Host controller events only: this agent does not serve the boot timeline (flight recorder) yet.';
    setChildren(eventsBox, eventsSection(list, 200));
  };
  /** The parts that depend on the host object. */
  const renderHostParts = (): void => {
    const description = hostDescription(host);
    setChildren(head, h('h1', {}, name), stateBadge(host), powerLabel(host), description === '' ? '' : h('p', { class: 'muted host-description' }, description));
    for (const { action, button } of buttons) button.disabled = !action.enabled(host);
    setChildren(progress, h('h2', { id: 'progress-title' }, 'Lifecycle'), stepIndicator(host, true));
    setChildren(details, specSection(host), statusSection(host), historySection(host, Date.now()), hardwareSection(host), eraseRecordsSection(eraseRecords));
  };
  renderHostParts();
  renderEventParts();

  let pending: number | undefined;
  const refreshHost = (): void => {
    window.clearTimeout(pending);
    pending = window.setTimeout(() => {
      api.getHost(name).then(
        (fresh) => {
          if (fresh.metadata.resourceVersion === host.metadata.resourceVersion) return;
          host = fresh;
          renderHostParts();
          renderEventParts();
        },
        (error: unknown) => {
          if (error instanceof ApiFailure && error.status === 404) toast(`${name} was deleted`, 'error');
        },
      );
    }, 150);
  };
  const mac = (): string | undefined => bootMacOf(host);
  const newest = Math.max(0, ...events.keys());
  const live = new LiveStream({
    afterSeq: newest,
    onEvent: (event) => {
      if (event.host !== name && (event.mac === undefined || event.mac !== mac())) return;
      events.set(event.seq, event);
      renderEventParts();
      if (event.host === name) refreshHost();
      if (event.reason === 'EraseRecorded') {
        api.eraseRecords(name).then((fresh) => {
          eraseRecords = fresh;
          renderHostParts();
        }, () => undefined);
      }
    },
    onReconnected: () => {
      api.hostTimeline(name, EVENT_LIMIT).then((fresh) => {
        for (const e of fresh.events) events.set(e.seq, e);
        renderEventParts();
        refreshHost();
      }, () => undefined);
    },
  });
  live.start();
  window.setInterval(renderEventParts, REDRAW_MS);
  window.setInterval(refreshHost, HOST_POLL_MS);
  document.addEventListener(ACTION_DONE_EVENT, () => {
    for (const ms of AFTER_ACTION_MS) window.setTimeout(refreshHost, ms);
  });
}
