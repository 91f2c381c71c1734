/**
 * The boot timeline model and layout (agent/web/ui/timeline.ts, timeline-layout.ts): lanes by
 * event source, spans with durations, idle gaps collapsed into breaks, a monotonic time axis.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StoredEvent } from '../../../agent/store/types.js';
import { buildTimeline, laneOf, stateChangeTarget, TIMELINE_LANES, type LaneId, type TimelineSpan } from '../../../agent/web/ui/timeline.js';
import { formatUtcClock, layoutTimeline } from '../../../agent/web/ui/timeline-layout.js';

const T0 = Date.parse('2026-11-30T10:00:00Z');
let seq = 100;
function ev(offsetMs: number, source: string, reason: string, data: Record<string, unknown> = {}, extra: Partial<StoredEvent> = {}): StoredEvent {
  seq += 1;
  return { seq, time: new Date(T0 + offsetMs).toISOString(), type: 'Normal', reason, message: reason, source, data, ...extra };
}

const laneCases: Record<string, [string, string, LaneId]> = {
  'DHCP from the flight recorder': ['bootsvc:dhcp', 'DHCPOffer', 'dhcp'],
  TFTP: ['bootsvc:tftp', 'TFTPTransferDone', 'tftp'],
  HTTP: ['bootsvc:http', 'HTTPRequest', 'http'],
  'ramdisk (bootsvc)': ['bootsvc:ramdisk', 'RamdiskHeartbeat', 'ramdisk'],
  'ramdisk (bare source)': ['ramdisk', 'RamdiskHeartbeat', 'ramdisk'],
  'BMC call': ['bmc', 'BMCCall', 'bmc'],
  'controller BMC validation': ['host-controller', 'BMCAccessValidated', 'bmc'],
  'controller power error': ['host-controller', 'PowerManagementError', 'bmc'],
  'controller state change': ['host-controller', 'ProvisioningStateChanged', 'controller'],
  'unknown source': ['something-else', 'Whatever', 'controller'],
};
for (const [name, [source, reason, lane]] of Object.entries(laneCases)) {
  test(`laneOf: ${name}`, () => {
    assert.equal(laneOf({ source, reason }), lane);
  });
}

test('lanes are in boot order', () => {
  assert.deepEqual(TIMELINE_LANES.map((l) => l.id), ['dhcp', 'tftp', 'http', 'ramdisk', 'bmc', 'controller']);
});

test('stateChangeTarget reads the controller message and data.to', () => {
  assert.equal(stateChangeTarget(ev(0, 'host-controller', 'ProvisioningStateChanged', {}, { message: 'available → provisioning' })), 'provisioning');
  assert.equal(stateChangeTarget(ev(0, 'host-controller', 'ProvisioningStateChanged', { to: 'inspecting' }, { message: 'x' })), 'inspecting');
  assert.equal(stateChangeTarget(ev(0, 'host-controller', 'Other', {}, { message: 'a → b' })), undefined);
});

function spanOf(spans: TimelineSpan[], lane: LaneId): TimelineSpan {
  const span = spans.find((s) => s.lane === lane);
  assert.ok(span, `a ${lane} span`);
  return span;
}

test('a full boot: one span per phase with its duration', () => {
  const events = [
    ev(0, 'bootsvc:dhcp', 'DHCPDiscover', { xid: 5 }),
    ev(20, 'bootsvc:dhcp', 'DHCPOffer', { xid: 5 }),
    ev(1000, 'bootsvc:dhcp', 'DHCPRequest', { xid: 5 }),
    ev(1010, 'bootsvc:dhcp', 'DHCPAck', { xid: 5, address: '172.22.0.50' }),
    ev(2500, 'bootsvc:tftp', 'TFTPTransferDone', { file: 'ipxe.efi', durationMs: 1200 }),
    ev(4000, 'bootsvc:http', 'HTTPRequest', { path: '/images/vmlinuz', durationMs: 800, status: 200 }),
    ev(30_000, 'bootsvc:ramdisk', 'RamdiskHeartbeat'),
    ev(60_000, 'bootsvc:ramdisk', 'RamdiskHeartbeat'),
    ev(90_000, 'bmc', 'BMCCall', { call: 'power-off', durationMs: 300 }),
    ev(-5000, 'host-controller', 'ProvisioningStateChanged', {}, { message: 'available → provisioning' }),
    ev(95_000, 'host-controller', 'ProvisioningStateChanged', {}, { message: 'provisioning → provisioned' }),
  ];
  const model = buildTimeline(events, T0 + 100_000);
  assert.equal(model.marks.length, events.length);
  assert.deepEqual(spanOf(model.spans, 'dhcp'), { lane: 'dhcp', startMs: T0, endMs: T0 + 1010, label: 'lease 172.22.0.50', warning: false, open: false });
  assert.deepEqual([spanOf(model.spans, 'tftp').startMs - T0, spanOf(model.spans, 'tftp').label], [1300, 'ipxe.efi']);
  assert.deepEqual([spanOf(model.spans, 'http').endMs - spanOf(model.spans, 'http').startMs, spanOf(model.spans, 'http').label], [800, 'vmlinuz']);
  assert.deepEqual([spanOf(model.spans, 'ramdisk').startMs - T0, spanOf(model.spans, 'ramdisk').endMs - T0], [30_000, 60_000]);
  assert.equal(spanOf(model.spans, 'bmc').label, 'power-off');
  const controller = model.spans.filter((s) => s.lane === 'controller');
  assert.deepEqual(controller.map((s) => [s.label, s.startMs - T0, s.endMs - T0, s.open]), [['provisioning', -5000, 95_000, false], ['provisioned', 95_000, 100_000, true]]);
  assert.equal(model.startMs, T0 - 5000);
  assert.equal(model.endMs, T0 + 100_000);
});

test('ramdisk callbacks more than two minutes apart are separate sessions', () => {
  const model = buildTimeline([ev(0, 'bootsvc:ramdisk', 'RamdiskHeartbeat'), ev(60_000, 'bootsvc:ramdisk', 'RamdiskLog'), ev(600_000, 'bootsvc:ramdisk', 'RamdiskHeartbeat'), ev(660_000, 'bootsvc:ramdisk', 'RamdiskHeartbeat')], T0 + 700_000);
  assert.deepEqual(model.spans.map((s) => [s.startMs - T0, s.endMs - T0]), [[0, 60_000], [600_000, 660_000]]);
});

test('warnings, NAKs and duplicate events', () => {
  const failed = ev(10, 'bootsvc:tftp', 'TFTPTransferError', { file: 'undionly.kpxe', durationMs: 5 }, { type: 'Warning' });
  const model = buildTimeline([ev(0, 'bootsvc:dhcp', 'DHCPRequest', { xid: 1 }), ev(2, 'bootsvc:dhcp', 'DHCPNak', { xid: 1 }), failed, failed, ev(0, 'x', 'bad time', {}, { time: 'not a time' })], T0);
  assert.equal(model.marks.length, 3, 'duplicate seq kept once, unparseable time dropped');
  assert.deepEqual(model.spans.map((s) => [s.lane, s.label, s.warning]), [['dhcp', 'NAK', true], ['tftp', 'undionly.kpxe', true]]);
  assert.equal(model.marks.find((m) => m.lane === 'tftp')?.warning, true);
});

test('an empty timeline', () => {
  const model = buildTimeline([], T0);
  assert.deepEqual(model, { marks: [], spans: [], startMs: T0, endMs: T0 });
  const layout = layoutTimeline(model, T0);
  assert.equal(layout.empty, true);
  assert.deepEqual([layout.marks, layout.spans, layout.ticks, layout.breaks], [[], [], [], []]);
  assert.equal(layout.lanes.length, 6);
});

test('layout: x grows with time, within the plot, and idle gaps collapse into labelled breaks', () => {
  const events = [
    ev(0, 'bootsvc:dhcp', 'DHCPDiscover'), ev(1000, 'bootsvc:tftp', 'TFTPTransferDone', { file: 'a', durationMs: 500 }), ev(20_000, 'bootsvc:http', 'HTTPRequest', { path: '/x', durationMs: 1000 }),
    ev(3 * 3600_000, 'bootsvc:dhcp', 'DHCPDiscover'), ev(3 * 3600_000 + 5000, 'bootsvc:dhcp', 'DHCPOffer'),
  ];
  const model = buildTimeline(events, T0 + 3 * 3600_000 + 10_000);
  const layout = layoutTimeline(model, T0 + 3 * 3600_000 + 10_000, { widthPx: 1000 });
  const xs = layout.marks.map((m) => m.x);
  assert.deepEqual(xs, [...xs].sort((a, b) => a - b), 'marks in time order left to right');
  for (const x of xs) assert.ok(x >= layout.plotLeft - 0.001 && x <= layout.plotRight + 0.001, `x ${x} inside the plot`);
  assert.ok(Math.abs((xs[0] ?? 0) - layout.plotLeft) < 0.001, 'first event at the left edge');
  assert.ok(Math.abs((xs[xs.length - 1] ?? 0) - layout.plotRight) < 0.001, 'last event at the right edge');
  assert.equal(layout.breaks.length, 1);
  assert.equal(layout.breaks[0]?.label, '2 h 59 min');
  assert.ok((xs[3] ?? 0) - (xs[2] ?? 0) < 60, 'three idle hours take a break width, not the plot');
  for (let i = 1; i < layout.ticks.length; i += 1) assert.ok((layout.ticks[i]?.x ?? 0) - (layout.ticks[i - 1]?.x ?? 0) >= 90, 'ticks spaced');
  assert.ok(layout.ticks.length >= 2);
  assert.match(layout.ticks[0]?.label ?? '', /^10:00:00$/);
});

test('layout: span labels show only when they fit, open spans say so', () => {
  const events = [ev(0, 'host-controller', 'ProvisioningStateChanged', {}, { message: 'available → provisioning' }), ev(100, 'bootsvc:http', 'HTTPRequest', { path: '/tiny', durationMs: 1 })];
  const layout = layoutTimeline(buildTimeline(events, T0 + 60_000), T0 + 60_000);
  const controller = layout.spans.find((s) => s.lane === 'controller');
  const tiny = layout.spans.find((s) => s.lane === 'http');
  assert.ok(controller !== undefined && tiny !== undefined);
  assert.equal(controller.showLabel, true);
  assert.equal(controller.durationText, 'for 1 min 00 s+');
  assert.equal(controller.open, true);
  assert.equal(tiny.showLabel, false);
  assert.ok(tiny.width >= 2, 'tiny spans stay visible');
  assert.match(controller.title, /now\)$/);
});

test('layout: a single instant is centred', () => {
  const layout = layoutTimeline(buildTimeline([ev(0, 'bmc', 'BMCCall')], T0), T0);
  const x = layout.marks[0]?.x ?? 0;
  assert.ok(Math.abs(x - (layout.plotLeft + layout.plotRight) / 2) < 0.001);
});

test('formatUtcClock', () => {
  assert.equal(formatUtcClock(Date.parse('2026-11-30T07:05:09.999Z')), '07:05:09');
});
