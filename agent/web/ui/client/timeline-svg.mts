/**
 * @module Draws the boot timeline as an inline SVG swimlane from the pure layout
 * (timeline-layout.ts): lane bands and labels, an axis in local time, collapsed idle gaps,
 * spans with their durations and one mark per event, each with a tooltip (`<title>`). The SVG
 * is `role="img"` with a summary; the events table below it carries the same facts for screen
 * readers and keyboard users.
 */
import type { StoredEvent } from '../../../store/types.js';
import { layoutTimeline } from '../timeline-layout.js';
import { buildTimeline, TIMELINE_LANES } from '../timeline.js';
import { formatLocalClock, formatLocalTime, h, s } from './dom.mjs';

let svgCount = 0;

/** Renders the timeline of `events` as of `nowMs`. */
export function renderTimelineSvg(events: readonly StoredEvent[], nowMs: number, subject: string): SVGSVGElement {
  svgCount += 1;
  const id = `timeline-${svgCount}`;
  const model = buildTimeline(events, nowMs);
  const layout = layoutTimeline(model, nowMs, { formatTime: formatLocalClock });
  const perLane = TIMELINE_LANES.map((lane) => `${lane.label} ${model.marks.filter((m) => m.lane === lane.id).length}`).join(', ');
  const description = layout.empty
    ? 'No events recorded yet.'
    : `${model.marks.length} events from ${formatLocalTime(model.startMs)} to ${formatLocalTime(model.endMs)}; per lane: ${perLane}. The events table lists them all.`;
  const top = layout.lanes[0]?.y ?? 0;
  return s('svg', { class: 'timeline', viewBox: `0 0 ${layout.width} ${layout.height}`, role: 'img', 'aria-labelledby': `${id}-title ${id}-desc`, 'data-testid': 'timeline' },
    s('title', { id: `${id}-title` }, `Boot timeline of ${subject}`),
    s('desc', { id: `${id}-desc` }, description),
    layout.lanes.map((lane, i) => s('g', { class: 'tl-lane', 'data-lane': lane.id },
      s('rect', { class: i % 2 === 0 ? 'tl-lane-bg' : 'tl-lane-bg odd', x: 0, y: lane.y, width: layout.width, height: lane.height }),
      s('text', { class: 'tl-lane-label', x: 10, y: lane.y + lane.height / 2 + 4 }, lane.label))),
    layout.ticks.map((tick) => s('g', { class: 'tl-tick' },
      s('line', { x1: tick.x, x2: tick.x, y1: top - 6, y2: layout.height - 4 }),
      s('text', { x: tick.x + 3, y: top - 10 }, tick.label))),
    layout.breaks.map((b) => s('g', { class: 'tl-break' },
      s('rect', { x: b.x, y: top, width: b.width, height: layout.height - top - 4 }),
      s('line', { x1: b.x, x2: b.x, y1: top, y2: layout.height - 4 }),
      s('line', { x1: b.x + b.width, x2: b.x + b.width, y1: top, y2: layout.height - 4 }),
      // Vertical, centred in the gap, so it never collides with the axis labels.
      s('text', { x: b.x + b.width / 2 + 3.5, y: (top + layout.height) / 2, 'text-anchor': 'middle', transform: `rotate(-90 ${b.x + b.width / 2 + 3.5} ${(top + layout.height) / 2})` }, `+${b.label}`),
      s('title', {}, `${b.label} without events`))),
    layout.spans.map((span) => s('g', { class: 'tl-span-group', 'data-lane': span.lane },
      s('rect', { class: `tl-span lane-${span.lane}${span.warning ? ' warn' : ''}${span.open ? ' open' : ''}`, x: span.x, y: span.y, width: span.width, height: span.height, rx: 3 },
        s('title', {}, span.title)),
      span.showLabel ? s('text', { class: 'tl-span-text', x: span.x + 4, y: span.y + span.height - 3 }, `${span.label} · ${span.durationText}`) : null)),
    layout.marks.map((mark) => s('circle', { class: `tl-mark lane-${mark.lane}${mark.warning ? ' warn' : ''}`, cx: mark.x, cy: mark.y, r: 4.5, 'data-lane': mark.lane, 'data-seq': mark.seq },
      s('title', {}, mark.title))),
    layout.empty ? s('text', { class: 'tl-empty', x: layout.plotLeft + 10, y: top + 3 * (layout.lanes[0]?.height ?? 30) }, 'No events recorded yet') : null);
}

/** The colour legend under the timeline. */
export function timelineLegend(): HTMLElement {
  return h('div', { class: 'legend', 'aria-hidden': 'true' },
    'Bars are spans with durations; dots are events; red marks warnings; dashed bars are still running; “+3 h” marks a collapsed idle gap.');
}
