/**
 * @module Entry of the status page's browser bundle: fills the topbar (agent id, version,
 * token button), then mounts the page named by `<body data-page>` — the rack view or the host
 * page (`/hosts/<name>`). Loaded as a module script from `/ui/js/…` (no inline script: the
 * page's CSP is `default-src 'self'`).
 */
import { api } from './api.mjs';
import { openTokenDialog, updateTokenButton } from './dialogs.mjs';
import { byId, h, setChildren } from './dom.mjs';
import { mountHostView } from './host-view.mjs';
import { mountRackView } from './rack-view.mjs';

function hostNameFromPath(pathname: string): string | undefined {
  const match = /^\/hosts\/([^/]+)\/?$/.exec(pathname);
  if (match?.[1] === undefined) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
}

async function start(): Promise<void> {
  const main = byId('main', HTMLElement);
  const tokenButton = byId('token-button', HTMLButtonElement);
  tokenButton.addEventListener('click', () => { openTokenDialog(); });
  updateTokenButton();
  api.version().then(
    (v) => { byId('agent-info', HTMLElement).textContent = `${v.agentId} · ${v.provisioner} provisioner · v${v.version}`; },
    () => undefined,
  );
  const page = document.body.dataset.page;
  const name = hostNameFromPath(window.location.pathname);
  try {
    if (page === 'host' && name !== undefined) await mountHostView(main, name);
    else if (page === 'rack') await mountRackView(main);
    else setChildren(main, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '/' }, 'Back to the rack')));
  } catch (error: unknown) {
    setChildren(main, h('h1', {}, 'The agent did not answer'), h('p', { class: 'notice', role: 'alert' }, error instanceof Error ? error.message : String(error)),
      h('p', {}, h('a', { href: window.location.pathname }, 'Reload')));
  }
}

void start();
