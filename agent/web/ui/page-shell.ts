/**
 * @module The status page's HTML document shell and its security headers. The shell holds
 * landmarks (banner, main, a polite live region) and loads one module script and one
 * stylesheet from `/ui/`; the browser bundle (agent/web/ui/client) renders everything else
 * with DOM calls. No inline script or style anywhere, so the Content-Security-Policy can be
 * `default-src 'self'` (CSP Level 3) with nothing relaxed.
 * @pure
 */

/** Where the status page's static files live (under the management listener). */
export const UI_PREFIX = '/ui';
/** The browser bundle's entry module, relative to the bundle root served at `/ui/js/`. */
export const CLIENT_ENTRY = 'agent/web/ui/client/main.mjs';

/** The page kinds the shell is rendered for (`data-page` on `<body>`). */
export type PageKind = 'rack' | 'host' | 'not-found';

/** `Content-Security-Policy` of every status-page response: same-origin only, no inline code, no framing. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers sent with every status-page response (CSP, no sniffing, no referrer, no framing). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);
}

/** A small rack glyph used as the favicon (SVG, no external references). */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="5" y="3" width="22" height="26" rx="3" fill="#0b5cad"/>' +
  '<rect x="9" y="8" width="14" height="4" rx="1" fill="#fff"/><rect x="9" y="14" width="14" height="4" rx="1" fill="#fff"/>' +
  '<rect x="9" y="20" width="14" height="4" rx="1" fill="#7ee2a8"/></svg>';

/** Renders the document for a page; `title` is escaped. */
export function renderPageShell(kind: PageKind, title: string): string {
  const safeTitle = escapeHtml(title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${safeTitle}</title>
<link rel="icon" href="${UI_PREFIX}/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${UI_PREFIX}/app.css">
<script type="module" src="${UI_PREFIX}/js/${CLIENT_ENTRY}"></script>
</head>
<body data-page="${kind}">
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar">
  <a class="brand" href="/"><span class="brand-mark" aria-hidden="true"></span>rackside</a>
  <span class="agent-info" id="agent-info"></span>
  <span class="topbar-spacer"></span>
  <span class="live" id="live-status" role="status" aria-live="polite"><span class="live-dot" aria-hidden="true"></span><span class="live-text">Connecting…</span></span>
  <button type="button" class="btn btn-quiet" id="token-button">Management token</button>
</header>
<main id="main" tabindex="-1">
  <p class="loading">Loading…</p>
  <noscript><p class="notice">The status page needs JavaScript. The same data is available from the API under <code>/api/v1/</code>.</p></noscript>
</main>
<div class="toasts" id="toasts" role="status" aria-live="polite"></div>
</body>
</html>
`;
}
