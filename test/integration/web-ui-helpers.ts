/**
 * Helpers of the status-page browser tests: management API calls (list/get hosts, apply an
 * image), a bounded wait, and an in-page accessibility probe (labels, landmarks, WCAG 2.2
 * contrast of every visible text element against its effective background).
 */
import type { BareMetalHost } from '../../agent/host/types.js';

/** Polls `check` every 100 ms until true; fails after `timeoutMs` naming `what`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function listHosts(url: string): Promise<BareMetalHost[]> {
  const response = await fetch(`${url}/api/v1/hosts`);
  if (!response.ok) throw new Error(`GET hosts: ${response.status}`);
  return ((await response.json()) as { items: BareMetalHost[] }).items;
}

export async function getHost(url: string, name: string): Promise<BareMetalHost> {
  const response = await fetch(`${url}/api/v1/hosts/${name}`);
  if (!response.ok) throw new Error(`GET host ${name}: ${response.status}`);
  return (await response.json()) as BareMetalHost;
}

/** Replaces the host's spec through `PUT /hosts/:name` (JSON), keeping its metadata. */
export async function putSpec(url: string, name: string, change: (spec: BareMetalHost['spec']) => BareMetalHost['spec'], token?: string): Promise<void> {
  const host = await getHost(url, name);
  const { namespace, annotations, labels, resourceVersion } = host.metadata;
  const response = await fetch(`${url}/api/v1/hosts/${name}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ apiVersion: host.apiVersion, kind: host.kind, metadata: { name, namespace, annotations, labels, resourceVersion }, spec: change(host.spec) }),
  });
  if (!response.ok) throw new Error(`PUT host ${name}: ${response.status} ${await response.text()}`);
}

/** Gives the host an image (and `online: true`): the demo provisioner then provisions it. */
export function applyImage(url: string, name: string, token?: string): Promise<void> {
  return putSpec(url, name, (spec) => ({
    ...spec,
    online: true,
    image: { url: 'http://images.example/debian-12.qcow2', checksum: 'http://images.example/debian-12.qcow2.sha256sum', checksumType: 'sha256', format: 'qcow2' },
  }), token);
}

/**
 * Evaluated in the page: `{ unlabeled, landmarks, lowContrast }`. Contrast follows WCAG 2.2
 * SC 1.4.3 (4.5:1, or 3:1 for large text); disabled controls are exempt, as the SC says.
 */
export const A11Y_CHECKS = `(() => {
  const unlabeled = [...document.querySelectorAll('input, select, textarea')]
    .filter((el) => el.type !== 'hidden' && el.labels.length === 0 && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
    .map((el) => el.id || el.name || el.outerHTML.slice(0, 80));
  const landmarks = [];
  if (document.querySelectorAll('body > header').length === 1) landmarks.push('banner');
  if (document.querySelectorAll('main').length === 1) landmarks.push('main');
  const parse = (text) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(text);
    if (!m) return null;
    const p = m[1].split(/[\\s,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const blend = (top, base) => ({ r: top.r * top.a + base.r * (1 - top.a), g: top.g * top.a + base.g * (1 - top.a), b: top.b * top.a + base.b * (1 - top.a), a: 1 });
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let base = { r: 255, g: 255, b: 255, a: 1 };
    for (const c of layers.reverse()) base = blend(c, base);
    return base;
  };
  const channel = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const luminance = (c) => 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
  const lowContrast = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('svg, .visually-hidden, :disabled, noscript, script, style, title')) continue;
    const text = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim();
    if (text === '' || el.getClientRects().length === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    const bg = background(el);
    const fgRaw = parse(style.color);
    if (!fgRaw) continue;
    const fg = blend(fgRaw, bg);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) lowContrast.push(el.tagName.toLowerCase() + '.' + el.className + ' "' + text.slice(0, 30) + '" ' + ratio.toFixed(2) + ' ' + style.color + ' on rgb(' + [bg.r, bg.g, bg.b].map(Math.round).join(', ') + ')');
  }
  return { unlabeled, landmarks, lowContrast };
})()`;

/** Minimal page surface the helpers need (playwright's Page). */
interface Evaluates {
  evaluate<R>(expression: string): Promise<R>;
}

/** The `attribute` of every element matching `selector`, in document order. */
export function attributesOf(page: Evaluates, selector: string, attribute: string): Promise<(string | null)[]> {
  return page.evaluate<(string | null)[]>(`[...document.querySelectorAll(${JSON.stringify(selector)})].map((x) => x.getAttribute(${JSON.stringify(attribute)}))`);
}

/** How many distinct left edges the elements matching `selector` have (= columns). */
export function columnsOf(page: Evaluates, selector: string): Promise<number> {
  return page.evaluate<number>(`new Set([...document.querySelectorAll(${JSON.stringify(selector)})].map((x) => Math.round(x.getBoundingClientRect().left))).size`);
}
