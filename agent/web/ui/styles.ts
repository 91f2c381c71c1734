/**
 * @module The status page stylesheet (served as `/ui/app.css`), kept as a string so the build
 * needs no asset copying. CSS grid from a phone to a wide monitor, visible focus rings, a dark
 * scheme under `prefers-color-scheme`, and colour pairs chosen for a contrast of at least
 * 4.5:1 (WCAG 2.2 SC 1.4.3); state is always also written as text, never colour alone.
 * @pure
 */

const TOKENS = `
:root {
  --bg: #f4f6f8; --surface: #ffffff; --surface-2: #f8f9fb; --border: #d8dde3; --border-strong: #b9c1ca;
  --text: #1b1f24; --muted: #56606b; --accent: #0b5cad; --accent-fg: #ffffff; --focus: #1f6feb;
  --done-fg: #116329; --done-bg: #dcf6e3; --ready-fg: #0a4f9e; --ready-bg: #dcefff;
  --busy-fg: #774300; --busy-bg: #fff0c2; --error-fg: #a40e26; --error-bg: #ffe3e6;
  --idle-fg: #46505a; --idle-bg: #eaedf0; --gone-fg: #6a3a9f; --gone-bg: #f0e7fc;
  --lane-dhcp: #1f6feb; --lane-tftp: #8250df; --lane-http: #0f7b70; --lane-ramdisk: #b35900;
  --lane-bmc: #57606a; --lane-controller: #0b5cad; --warn: #cf222e;
  --shadow: 0 1px 2px rgba(27, 31, 36, 0.06), 0 1px 3px rgba(27, 31, 36, 0.08);
  --radius: 8px;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0e1318; --surface: #161c23; --surface-2: #1b222a; --border: #2c3540; --border-strong: #3d4855;
    --text: #e6edf3; --muted: #9ba8b5; --accent: #6cb6ff; --accent-fg: #0b1a2b; --focus: #79c0ff;
    --done-fg: #7ee2a8; --done-bg: #11301f; --ready-fg: #a5d6ff; --ready-bg: #0f2a45;
    --busy-fg: #f2cc60; --busy-bg: #382a05; --error-fg: #ffa3aa; --error-bg: #47141c;
    --idle-fg: #c3ccd5; --idle-bg: #262d35; --gone-fg: #d2b8ff; --gone-bg: #2d2144;
    --lane-dhcp: #58a6ff; --lane-tftp: #bc8cff; --lane-http: #39c5b3; --lane-ramdisk: #e3a03b;
    --lane-bmc: #9ba8b5; --lane-controller: #79c0ff; --warn: #ff7b72;
    --shadow: none;
  }
}
`;

const BASE = `
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif; }
a { color: var(--accent); }
code, .mono { font-family: ui-monospace, SFMono-Regular, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.9em; }
h1, h2, h3 { line-height: 1.25; margin: 0; }
h1 { font-size: 1.5rem; font-weight: 650; }
h2 { font-size: 1.05rem; font-weight: 650; }
h3 { font-size: 1rem; font-weight: 600; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 4px; }
.visually-hidden { position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.skip-link { position: absolute; left: 8px; top: -48px; background: var(--surface); color: var(--accent); padding: 8px 12px; border-radius: var(--radius); z-index: 20; }
.skip-link:focus { top: 8px; }
.muted { color: var(--muted); }
.loading, .notice { color: var(--muted); padding: 24px 0; }
`;

const CHROME = `
.topbar { position: sticky; top: 0; z-index: 10; display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 10px 20px; background: var(--surface); border-bottom: 1px solid var(--border); }
.brand { display: inline-flex; align-items: center; gap: 8px; font-weight: 700; font-size: 1.1rem; color: var(--text); text-decoration: none; letter-spacing: 0.01em; }
.brand-mark { width: 20px; height: 20px; background: url("/ui/favicon.svg") center / contain no-repeat; }
.agent-info { color: var(--muted); font-size: 0.9rem; }
.topbar-spacer { flex: 1 1 auto; }
.live { display: inline-flex; align-items: center; gap: 6px; font-size: 0.9rem; color: var(--muted); }
.live-dot { width: 10px; height: 10px; border-radius: 50%; background: var(--idle-fg); }
.live[data-state="live"] .live-dot { background: #1a7f37; }
.live[data-state="reconnecting"] .live-dot { background: #bf8700; }
.live[data-state="offline"] .live-dot { background: var(--warn); }
main { max-width: 1920px; margin: 0 auto; padding: 20px; }
main:focus { outline: none; }
.page-head { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 14px; margin-bottom: 16px; }
.page-head h1 { overflow-wrap: anywhere; }
.breadcrumb { font-size: 0.9rem; margin-bottom: 6px; }
.breadcrumb ol { list-style: none; display: flex; gap: 6px; margin: 0; padding: 0; }
.breadcrumb li + li::before { content: "/"; color: var(--muted); margin-right: 6px; }
.toasts { position: fixed; right: 16px; bottom: 16px; display: grid; gap: 8px; z-index: 30; max-width: min(440px, calc(100vw - 32px)); }
.toast { background: var(--surface); border: 1px solid var(--border-strong); border-left: 4px solid var(--accent); border-radius: var(--radius); padding: 10px 14px; box-shadow: var(--shadow); overflow-wrap: anywhere; }
.toast.error { border-left-color: var(--warn); }
.btn { font: inherit; font-size: 0.92rem; display: inline-flex; align-items: center; gap: 6px; padding: 6px 12px; border-radius: 6px; border: 1px solid var(--border-strong); background: var(--surface); color: var(--text); cursor: pointer; min-height: 34px; }
.btn:hover { background: var(--surface-2); }
.btn:disabled { opacity: 0.55; cursor: not-allowed; }
.btn-primary { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
.btn-primary:hover { background: var(--accent); filter: brightness(1.08); }
.btn-danger { color: var(--error-fg); border-color: var(--error-fg); }
.btn-quiet { border-color: transparent; color: var(--accent); }
`;

const RACK = `
.rack-layout { display: grid; gap: 20px; grid-template-columns: minmax(0, 1fr); }
@media (min-width: 1180px) { .rack-layout { grid-template-columns: minmax(0, 1fr) 340px; } }
.summary { display: flex; flex-wrap: wrap; gap: 8px; margin: 0 0 14px; padding: 0; list-style: none; }
.chip { display: inline-flex; align-items: baseline; gap: 6px; padding: 4px 10px; border-radius: 999px; border: 1px solid var(--border); background: var(--surface); font-size: 0.88rem; color: var(--text); cursor: pointer; font-family: inherit; }
.chip strong { font-variant-numeric: tabular-nums; }
.chip[aria-pressed="true"] { border-color: var(--accent); box-shadow: inset 0 0 0 1px var(--accent); }
.filters { display: flex; flex-wrap: wrap; align-items: end; gap: 10px 16px; margin-bottom: 16px; padding: 12px 14px; background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); }
.field { display: grid; gap: 4px; font-size: 0.85rem; color: var(--muted); }
.field input[type="search"], .field input[type="text"], .field input[type="url"], .field input[type="password"], .field select {
  font: inherit; font-size: 0.95rem; color: var(--text); background: var(--surface); border: 1px solid var(--border-strong); border-radius: 6px; padding: 6px 10px; min-height: 34px; min-width: 12rem; }
.field-check { display: inline-flex; align-items: center; gap: 8px; font-size: 0.92rem; color: var(--text); min-height: 34px; }
.field-check input { width: 18px; height: 18px; }
.result-count { color: var(--muted); font-size: 0.88rem; margin-left: auto; }
.tiles { display: grid; gap: 12px; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); margin: 0; padding: 0; list-style: none; }
.tile { position: relative; display: grid; gap: 8px; align-content: start; padding: 12px 14px 12px 16px; background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow); min-height: 150px; }
.tile::before { content: ""; position: absolute; left: 0; top: 0; bottom: 0; width: 4px; border-radius: var(--radius) 0 0 var(--radius); background: var(--idle-fg); }
.tile[data-category="done"]::before { background: var(--done-fg); }
.tile[data-category="ready"]::before { background: var(--ready-fg); }
.tile[data-category="busy"]::before { background: var(--busy-fg); }
.tile[data-category="error"]::before { background: var(--error-fg); }
.tile[data-category="gone"]::before { background: var(--gone-fg); }
.tile-head { display: flex; align-items: start; justify-content: space-between; gap: 8px; }
.tile-name { font-size: 1rem; font-weight: 650; overflow-wrap: anywhere; }
.tile-name a { color: var(--text); text-decoration: none; }
.tile-name a:hover { text-decoration: underline; }
.tile-name a::after { content: ""; position: absolute; inset: 0; }
.tile-desc { color: var(--muted); font-size: 0.86rem; overflow-wrap: anywhere; display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }
.tile-meta { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 0.86rem; color: var(--muted); }
.tile-discovered { display: flex; align-items: center; justify-content: space-between; gap: 8px; font-size: 0.85rem; overflow-wrap: anywhere; }
.tile-discovered .btn { position: relative; z-index: 1; } /* above the tile's stretched name link */
.tile-error { font-size: 0.85rem; color: var(--error-fg); background: var(--error-bg); border-radius: 6px; padding: 6px 8px; overflow-wrap: anywhere; display: -webkit-box; -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden; }
.badge { display: inline-block; white-space: nowrap; font-size: 0.78rem; font-weight: 600; padding: 2px 8px; border-radius: 999px; background: var(--idle-bg); color: var(--idle-fg); }
.badge[data-category="done"] { background: var(--done-bg); color: var(--done-fg); }
.badge[data-category="ready"] { background: var(--ready-bg); color: var(--ready-fg); }
.badge[data-category="busy"] { background: var(--busy-bg); color: var(--busy-fg); }
.badge[data-category="error"] { background: var(--error-bg); color: var(--error-fg); }
.badge[data-category="gone"] { background: var(--gone-bg); color: var(--gone-fg); }
.power { display: inline-flex; align-items: center; gap: 5px; }
.power::before { content: ""; width: 8px; height: 8px; border-radius: 50%; border: 2px solid var(--muted); }
.power[data-on="true"]::before { background: #1a7f37; border-color: #1a7f37; }
.transport { display: inline-block; white-space: nowrap; font-size: 0.74rem; font-weight: 600; padding: 0 6px; border-radius: 4px; border: 1px solid var(--border-strong); }
.transport[data-transport="https"] { color: var(--done-fg); background: var(--done-bg); border-color: transparent; }
.transport[data-transport="mixed"] { color: var(--busy-fg); background: var(--busy-bg); border-color: transparent; }
.steps { display: flex; gap: 4px; margin: 0; padding: 0; list-style: none; }
.steps li { flex: 1 1 0; height: 6px; border-radius: 3px; background: var(--border); }
.steps li[data-status="done"] { background: var(--done-fg); }
.steps li[data-status="current"] { background: var(--busy-fg); }
.steps li[data-status="failed"] { background: var(--error-fg); }
.step-text { font-size: 0.8rem; color: var(--muted); }
.steps-large + .step-text { display: none; margin-top: 8px; }
.steps-large { gap: 0; counter-reset: step; }
.steps.steps-large li { height: auto; background: none; border-radius: 0; position: relative; padding-top: 22px; font-size: 0.82rem; color: var(--muted); text-align: center; }
.steps-large li::before { counter-increment: step; content: counter(step); position: absolute; top: 0; left: calc(50% - 10px); width: 20px; height: 20px; border-radius: 50%; font-size: 0.72rem; line-height: 20px; color: var(--muted); background: var(--surface); border: 2px solid var(--border-strong); z-index: 1; }
.steps-large li::after { content: ""; position: absolute; top: 10px; left: -50%; width: 100%; height: 2px; background: var(--border-strong); }
.steps-large li:first-child::after { display: none; }
.steps-large li[data-status="done"] { color: var(--text); }
.steps-large li[data-status="done"]::before { content: "✓"; background: var(--done-fg); border-color: var(--done-fg); color: var(--surface); }
.steps-large li[data-status="done"]::after, .steps-large li[data-status="current"]::after, .steps-large li[data-status="failed"]::after { background: var(--done-fg); }
.steps-large li[data-status="current"] { color: var(--text); font-weight: 600; }
.steps-large li[data-status="current"]::before { border-color: var(--busy-fg); color: var(--busy-fg); }
.steps-large li[data-status="failed"] { color: var(--error-fg); font-weight: 600; }
.steps-large li[data-status="failed"]::before { content: "!"; background: var(--error-fg); border-color: var(--error-fg); color: var(--surface); }
.empty { padding: 28px; text-align: center; color: var(--muted); background: var(--surface); border: 1px dashed var(--border-strong); border-radius: var(--radius); }
`;

const PANELS = `
.panels { display: grid; gap: 12px; align-content: start; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); }
@media (min-width: 1180px) { .panels { grid-template-columns: minmax(0, 1fr); } }
.panel, .section { background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); padding: 14px 16px; box-shadow: var(--shadow); min-width: 0; }
.panel h2, .section h2 { margin-bottom: 10px; display: flex; align-items: center; gap: 8px; justify-content: space-between; }
.panel dl, .section dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 14px; margin: 0; font-size: 0.9rem; }
.panel dt, .section dt { color: var(--muted); }
.panel dd, .section dd { margin: 0; overflow-wrap: anywhere; }
.not-configured { color: var(--muted); font-size: 0.9rem; margin: 0; }
.health { font-size: 0.78rem; font-weight: 600; padding: 2px 8px; border-radius: 999px; background: var(--idle-bg); color: var(--idle-fg); }
.health[data-health="ok"] { background: var(--done-bg); color: var(--done-fg); }
.health[data-health="bad"] { background: var(--error-bg); color: var(--error-fg); }
.health[data-health="warn"] { background: var(--busy-bg); color: var(--busy-fg); }
.progress { height: 8px; border-radius: 4px; background: var(--border); overflow: hidden; }
.progress > span { display: block; height: 100%; background: var(--accent); }
.host-layout { display: grid; gap: 16px; grid-template-columns: minmax(0, 1fr); }
.host-layout.details, .events-box { margin-top: 16px; }
@media (min-width: 1000px) { .host-layout { grid-template-columns: repeat(2, minmax(0, 1fr)); } .span-all { grid-column: 1 / -1; } }
.actions { display: flex; flex-wrap: wrap; gap: 8px; margin-bottom: 16px; }
.findings { display: grid; gap: 8px; margin: 0; padding: 0; list-style: none; }
.finding { border-left: 4px solid var(--busy-fg); background: var(--busy-bg); color: var(--text); padding: 8px 12px; border-radius: 6px; }
.finding[data-severity="error"] { border-left-color: var(--error-fg); background: var(--error-bg); }
.finding[data-severity="info"] { border-left-color: var(--ready-fg); background: var(--ready-bg); }
.finding strong { display: block; overflow-wrap: anywhere; }
.finding p { margin: 4px 0 0; font-size: 0.9rem; overflow-wrap: anywhere; }
.all-clear { color: var(--done-fg); margin: 0; }
.table-wrap { overflow-x: auto; }
table.data { width: 100%; border-collapse: collapse; font-size: 0.88rem; }
table.data caption { text-align: left; font-weight: 600; padding: 10px 0 6px; color: var(--text); }
table.data th, table.data td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--border); vertical-align: top; }
table.data th { color: var(--muted); font-weight: 600; font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.03em; white-space: nowrap; }
table.data td { overflow-wrap: break-word; }
.table-wrap table.data { min-width: 560px; }
table.data tr[data-type="Warning"] td { color: var(--error-fg); }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
`;

const TIMELINE_AND_DIALOGS = `
.timeline-scroll { overflow-x: auto; }
.timeline { display: block; width: 100%; min-width: 860px; height: auto; font-family: inherit; }
.tl-lane-bg { fill: var(--surface-2); }
.tl-lane-bg.odd { fill: var(--surface); }
.tl-lane-label { fill: var(--text); font-size: 12px; font-weight: 600; }
.tl-tick line { stroke: var(--border); }
.tl-tick text { fill: var(--muted); font-size: 11px; }
.tl-break rect { fill: var(--bg); }
.tl-break line { stroke: var(--border-strong); stroke-dasharray: 3 3; }
.tl-break text { fill: var(--muted); font-size: 10px; }
.tl-span { fill-opacity: 0.28; stroke-width: 1.5; }
.tl-span.open { stroke-dasharray: 4 3; }
.tl-span-text { fill: var(--text); font-size: 11px; }
.tl-mark { stroke: var(--surface); stroke-width: 1.5; }
.tl-mark.warn { fill: var(--warn); }
.lane-dhcp { fill: var(--lane-dhcp); stroke: var(--lane-dhcp); }
.lane-tftp { fill: var(--lane-tftp); stroke: var(--lane-tftp); }
.lane-http { fill: var(--lane-http); stroke: var(--lane-http); }
.lane-ramdisk { fill: var(--lane-ramdisk); stroke: var(--lane-ramdisk); }
.lane-bmc { fill: var(--lane-bmc); stroke: var(--lane-bmc); }
.lane-controller { fill: var(--lane-controller); stroke: var(--lane-controller); }
.tl-span.warn { fill: var(--warn); stroke: var(--warn); }
.tl-mark.lane-controller, .tl-mark.lane-dhcp, .tl-mark.lane-tftp, .tl-mark.lane-http, .tl-mark.lane-ramdisk, .tl-mark.lane-bmc { stroke: var(--surface); }
.tl-empty { fill: var(--muted); font-size: 13px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 0.82rem; color: var(--muted); margin-top: 8px; }
dialog { border: 1px solid var(--border-strong); border-radius: 10px; padding: 0; background: var(--surface); color: var(--text); width: min(520px, calc(100vw - 32px)); box-shadow: 0 12px 32px rgba(0, 0, 0, 0.25); }
dialog::backdrop { background: rgba(15, 20, 25, 0.55); }
dialog form { display: grid; gap: 14px; padding: 18px 20px; }
dialog .field input, dialog .field select { width: 100%; min-width: 0; }
dialog .dialog-buttons { display: flex; justify-content: flex-end; gap: 8px; }
.dialog-error { color: var(--error-fg); background: var(--error-bg); padding: 8px 10px; border-radius: 6px; margin: 0; overflow-wrap: anywhere; }
.dialog-error:empty { display: none; }
@media (max-width: 560px) {
  main { padding: 12px; }
  .steps.steps-large li { font-size: 0; }
  .steps.steps-large li::before { font-size: 0.72rem; }
  .steps-large + .step-text { display: block; }
  .section dl { grid-template-columns: minmax(0, 1fr); gap: 0; }
  .section dd { margin-bottom: 6px; }
  .topbar { padding: 8px 12px; position: static; }
  .field input[type="search"], .field select { min-width: 0; width: 100%; }
  .filters .field { flex: 1 1 100%; }
}
`;

/** The whole stylesheet. */
export const STATUS_PAGE_CSS = [TOKENS, BASE, CHROME, RACK, PANELS, TIMELINE_AND_DIALOGS].join('\n');
