/**
 * @module Lays a {@link TimelineModel} out as SVG primitives (lanes, marks, bars, axis ticks),
 * in viewBox units. Time maps to x piecewise-linearly: stretches with boot activity get the
 * width, and idle gaps longer than `gapMs` (a host resting in `provisioned` for a week between
 * two boots) collapse to a fixed-width break labelled with the gap's length. The browser
 * draws the result with DOM calls (text as text nodes, never markup).
 * @pure
 */
import { formatDuration } from './host-model.js';
import { TIMELINE_LANES, type LaneId, type TimelineModel } from './timeline.js';

/** Geometry and formatting of the layout. */
export interface TimelineLayoutOptions {
  widthPx: number;
  labelWidthPx: number;
  axisHeightPx: number;
  laneHeightPx: number;
  /** Idle gaps longer than this become a break. */
  gapMs: number;
  breakWidthPx: number;
  /** Smallest distance between two axis labels. */
  minTickSpacingPx: number;
  /** Axis label of a time (default: UTC `HH:MM:SS`). */
  formatTime: (ms: number) => string;
}

/** `HH:MM:SS` in UTC. */
export function formatUtcClock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/** Defaults: 1000 units wide, 30-unit lanes, gaps over 2 minutes collapsed. */
export const DEFAULT_TIMELINE_LAYOUT: TimelineLayoutOptions = {
  widthPx: 1000,
  labelWidthPx: 96,
  axisHeightPx: 26,
  laneHeightPx: 30,
  gapMs: 120_000,
  breakWidthPx: 28,
  minTickSpacingPx: 90,
  formatTime: formatUtcClock,
};

/** One piece of the time → x mapping. */
interface Segment {
  startMs: number;
  endMs: number;
  x0: number;
  x1: number;
  isBreak: boolean;
}

/** A lane band. */
export interface LaidOutLane {
  id: LaneId;
  label: string;
  y: number;
  height: number;
}

/** A point event. `title` is the tooltip text. */
export interface LaidOutMark {
  seq: number;
  lane: LaneId;
  x: number;
  y: number;
  warning: boolean;
  title: string;
}

/** A bar; `showLabel` when its label and duration fit inside. */
export interface LaidOutSpan {
  lane: LaneId;
  x: number;
  y: number;
  width: number;
  height: number;
  label: string;
  durationText: string;
  showLabel: boolean;
  warning: boolean;
  open: boolean;
  title: string;
}

/** The whole drawing. `empty` when there was nothing to draw. */
export interface TimelineLayout {
  width: number;
  height: number;
  plotLeft: number;
  plotRight: number;
  lanes: LaidOutLane[];
  marks: LaidOutMark[];
  spans: LaidOutSpan[];
  ticks: { x: number; label: string }[];
  breaks: { x: number; width: number; label: string }[];
  empty: boolean;
}

const TICK_STEPS_MS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21_600, 43_200, 86_400].map((s) => s * 1000);
const CHAR_WIDTH_PX = 6.4;

/** Merges the busy intervals (marks and closed non-controller spans) into sorted, disjoint ones. */
function busyIntervals(model: TimelineModel, nowMs: number): [number, number][] {
  const raw: [number, number][] = model.marks.map((m) => [m.atMs, m.atMs]);
  for (const s of model.spans) {
    if (s.lane === 'controller') raw.push([s.startMs, s.startMs]);
    else raw.push([s.startMs, s.endMs]);
    if (s.open) raw.push([nowMs, nowMs]);
  }
  raw.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [start, end] of raw) {
    const last = merged[merged.length - 1];
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

/** Builds the piecewise mapping over [plotLeft, plotRight]. */
function segmentsOf(intervals: readonly [number, number][], plotLeft: number, plotRight: number, o: TimelineLayoutOptions): Segment[] {
  const pieces: { startMs: number; endMs: number; isBreak: boolean }[] = [];
  intervals.forEach(([start, end], i) => {
    const previous = intervals[i - 1];
    if (previous !== undefined) pieces.push({ startMs: previous[1], endMs: start, isBreak: start - previous[1] > o.gapMs });
    pieces.push({ startMs: start, endMs: end, isBreak: false });
  });
  const breaks = pieces.filter((p) => p.isBreak).length;
  const linearMs = pieces.filter((p) => !p.isBreak).reduce((sum, p) => sum + (p.endMs - p.startMs), 0);
  const linearPx = Math.max(0, plotRight - plotLeft - breaks * o.breakWidthPx);
  const pxPerMs = linearMs > 0 ? linearPx / linearMs : 0;
  // A single instant (or only breaks): centre the linear part.
  let x = linearMs > 0 ? plotLeft : plotLeft + linearPx / 2;
  return pieces.map((p) => {
    const width = p.isBreak ? o.breakWidthPx : (p.endMs - p.startMs) * pxPerMs;
    const segment = { ...p, x0: x, x1: x + width };
    x += width;
    return segment;
  });
}

function xAt(segments: readonly Segment[], ms: number): number {
  for (const s of segments) {
    if (ms <= s.endMs) {
      if (ms <= s.startMs || s.endMs === s.startMs) return s.x0;
      return s.x0 + ((ms - s.startMs) / (s.endMs - s.startMs)) * (s.x1 - s.x0);
    }
  }
  return segments[segments.length - 1]?.x1 ?? 0;
}

/** Axis ticks at "nice" multiples inside every linear segment, at least `minTickSpacingPx` apart. */
function ticksOf(segments: readonly Segment[], o: TimelineLayoutOptions): { x: number; label: string }[] {
  const ticks: { x: number; label: string }[] = [];
  let lastX = Number.NEGATIVE_INFINITY;
  const lastUsableX = segments[segments.length - 1]?.x1 ?? 0;
  const push = (x: number, ms: number): void => {
    // A label needs room to its right (it starts at the tick); the first one always fits.
    if (x - lastX < o.minTickSpacingPx || (ticks.length > 0 && x > lastUsableX - o.minTickSpacingPx / 2)) return;
    ticks.push({ x, label: o.formatTime(ms) });
    lastX = x;
  };
  for (const s of segments) {
    if (s.isBreak) continue;
    push(s.x0, s.startMs);
    const pxPerMs = s.endMs > s.startMs ? (s.x1 - s.x0) / (s.endMs - s.startMs) : 0;
    if (pxPerMs === 0) continue;
    const step = TICK_STEPS_MS.find((ms) => ms * pxPerMs >= o.minTickSpacingPx) ?? TICK_STEPS_MS[TICK_STEPS_MS.length - 1] ?? 86_400_000;
    for (let ms = Math.ceil(s.startMs / step) * step; ms <= s.endMs; ms += step) push(s.x0 + (ms - s.startMs) * pxPerMs, ms);
  }
  return ticks;
}

/** Lays out `model` as seen at `nowMs` (see the module comment). */
export function layoutTimeline(model: TimelineModel, nowMs: number, options: Partial<TimelineLayoutOptions> = {}): TimelineLayout {
  const o: TimelineLayoutOptions = { ...DEFAULT_TIMELINE_LAYOUT, ...options };
  const plotLeft = o.labelWidthPx + 10;
  const plotRight = o.widthPx - 14;
  const lanes: LaidOutLane[] = TIMELINE_LANES.map((lane, i) => ({ ...lane, y: o.axisHeightPx + i * o.laneHeightPx, height: o.laneHeightPx }));
  const laneY = new Map(lanes.map((l) => [l.id, l.y + l.height / 2]));
  const height = o.axisHeightPx + lanes.length * o.laneHeightPx + 4;
  const segments = segmentsOf(busyIntervals(model, nowMs), plotLeft, plotRight, o);
  const empty = model.marks.length === 0 && model.spans.length === 0;
  const spans: LaidOutSpan[] = model.spans.map((s) => {
    const x = xAt(segments, s.startMs);
    const width = Math.max(2, xAt(segments, s.endMs) - x);
    const durationText = `${s.open ? 'for ' : ''}${formatDuration(s.endMs - s.startMs)}${s.open ? '+' : ''}`;
    const text = `${s.label} · ${durationText}`;
    return {
      lane: s.lane, x, y: (laneY.get(s.lane) ?? 0) - 7, width, height: 14, label: s.label, durationText,
      showLabel: width >= text.length * CHAR_WIDTH_PX + 8, warning: s.warning, open: s.open,
      title: `${s.label}: ${durationText} (${o.formatTime(s.startMs)} – ${s.open ? 'now' : o.formatTime(s.endMs)})`,
    };
  });
  const marks: LaidOutMark[] = model.marks.map((m) => ({
    seq: m.seq, lane: m.lane, x: xAt(segments, m.atMs), y: laneY.get(m.lane) ?? 0, warning: m.warning,
    title: `${o.formatTime(m.atMs)} ${m.reason}: ${m.message}`,
  }));
  const breaks = segments.filter((s) => s.isBreak).map((s) => ({ x: s.x0, width: s.x1 - s.x0, label: formatDuration(s.endMs - s.startMs) }));
  return { width: o.widthPx, height, plotLeft, plotRight, lanes, marks, spans, ticks: empty ? [] : ticksOf(segments, o), breaks, empty };
}
