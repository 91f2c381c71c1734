/**
 * @module DOM building for the status page: {@link h} and {@link s} create HTML and SVG
 * elements whose children are nodes or text nodes — never markup — so host names, error
 * messages and event text from the API are always shown as text (no innerHTML anywhere).
 * String values for `on…` attributes are refused; listeners are functions.
 */

/** A child: a node, text, or nothing. */
export type Child = Node | string | number | null | undefined | false;
/** Attribute values; functions under `on…` keys become event listeners. */
export type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

function apply(element: Element, attrs: Attrs | undefined): void {
  if (attrs === undefined) return;
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') {
      if (!key.startsWith('on')) throw new Error(`listener under non-event key ${key}`);
      element.addEventListener(key.slice(2).toLowerCase(), value);
      continue;
    }
    if (key.toLowerCase().startsWith('on')) throw new Error(`refusing string event handler attribute ${key}`);
    element.setAttribute(key === 'className' ? 'class' : key, value === true ? '' : String(value));
  }
}

function append(element: Element, children: readonly (Child | readonly Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Creates an HTML element with attributes and children (text is inserted as text). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs, ...children: (Child | readonly Child[])[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, attrs);
  append(element, children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Creates an SVG element (same rules as {@link h}). */
export function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs?: Attrs, ...children: (Child | readonly Child[])[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  apply(element, attrs);
  append(element, children);
  return element;
}

/** Replaces all children of `parent`. */
export function setChildren(parent: Element, ...children: (Child | readonly Child[])[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** The element with `id`, typed, or an error naming it (the shell always has them). */
export function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`status page: #${id} missing`);
  return element;
}

/** Local date and time to the second, e.g. `2026-11-30 17:29:10`. */
export function formatLocalTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Local clock time `HH:MM:SS` (timeline axis). */
export function formatLocalClock(ms: number): string {
  return formatLocalTime(ms).slice(11);
}

/** An RFC 3339 time shown in local time inside a `<time>` element, or `—`. */
export function timeElement(iso: string | undefined): HTMLElement | string {
  if (iso === undefined || iso === '') return '—';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return h('time', { datetime: iso, title: iso }, formatLocalTime(ms));
}

/** Shows a short message in the polite live region for a few seconds. */
export function toast(message: string, kind: 'info' | 'error' = 'info'): void {
  const region = document.getElementById('toasts');
  if (region === null) return;
  const item = h('div', { class: `toast ${kind}` }, message);
  region.append(item);
  window.setTimeout(() => { item.remove(); }, kind === 'error' ? 12_000 : 5_000);
}
