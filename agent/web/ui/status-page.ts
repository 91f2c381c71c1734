/**
 * @module The status page's server side: an express router serving the rack view (`/`), the
 * host page (`/hosts/:name`), the stylesheet, the favicon and the compiled browser bundle
 * (`/ui/js/…`, built by `npm run build` from agent/web/ui/client into dist/ui). Every response
 * carries the page's Content-Security-Policy (`default-src 'self'`, no inline code). The pages
 * read the management API (`/api/v1/…`) from the same origin, so the router is mounted on the
 * management listener in front of the API app (see {@link withStatusPage}).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from '../../log.js';
import { CLIENT_ENTRY, FAVICON_SVG, SECURITY_HEADERS, UI_PREFIX, renderPageShell, type PageKind } from './page-shell.js';
import type { AgentStatusReport } from './status-report.js';
import { STATUS_PAGE_CSS } from './styles.js';

/** Options of {@link createStatusPage}. */
export interface StatusPageOptions {
  /** Root of the compiled browser bundle; default {@link defaultBundleDir}. */
  bundleDir?: string;
  /** Product name in page titles; default `rackside`. */
  productName?: string;
  /** Warned when the browser bundle is missing (the pages would stay on "Loading…"). */
  logger?: Pick<Logger, 'warn'>;
}

/**
 * The compiled browser bundle's root: `dist/ui`, found from this module's own location
 * (`dist/agent/web/ui/status-page.js` → `dist/ui`).
 */
export function defaultBundleDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../../ui');
}

function secure(res: Response): void {
  res.set(SECURITY_HEADERS);
}

function sendPage(res: Response, kind: PageKind, title: string, status = 200): void {
  secure(res);
  res.status(status).set('Cache-Control', 'no-store').type('html').send(renderPageShell(kind, title));
}

/** Host names as the API accepts them (RFC 1123 subdomain); anything else is a not-found page. */
const HOST_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * Builds the status-page router: `GET /` (rack view), `GET /hosts/:name` (host page),
 * `GET /ui/app.css`, `GET /ui/favicon.svg`, `GET /ui/js/*` (the browser bundle, revalidated
 * on each load). Paths it does not own fall through to the next handler (the API app).
 */
export function createStatusPage(options: StatusPageOptions = {}): express.Router {
  const bundleDir = options.bundleDir ?? defaultBundleDir();
  const product = options.productName ?? 'rackside';
  if (!existsSync(join(bundleDir, CLIENT_ENTRY))) {
    options.logger?.warn({ bundleDir }, 'status page: browser bundle missing (run npm run build); pages will not render');
  }
  const router = express.Router({ caseSensitive: true, strict: false });

  router.get('/', (_req, res) => {
    sendPage(res, 'rack', `Rack · ${product}`);
  });
  router.get('/hosts/:name', (req, res) => {
    const name = req.params.name;
    if (!HOST_NAME.test(name)) {
      sendPage(res, 'not-found', `Not found · ${product}`, 404);
      return;
    }
    sendPage(res, 'host', `${name} · ${product}`);
  });
  router.get(`${UI_PREFIX}/app.css`, (_req, res) => {
    secure(res);
    res.set('Cache-Control', 'no-cache').type('text/css').send(STATUS_PAGE_CSS);
  });
  router.get(`${UI_PREFIX}/favicon.svg`, (_req, res) => {
    secure(res);
    res.set('Cache-Control', 'max-age=86400').type('image/svg+xml').send(FAVICON_SVG);
  });
  router.get('/favicon.ico', (_req, res) => {
    res.redirect(301, `${UI_PREFIX}/favicon.svg`);
  });
  router.use(
    `${UI_PREFIX}/js`,
    express.static(bundleDir, {
      index: false,
      dotfiles: 'deny',
      redirect: false,
      fallthrough: true,
      cacheControl: false,
      setHeaders: (res) => {
        res.setHeader('Cache-Control', 'no-cache');
        for (const [key, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(key, value);
      },
    }),
  );
  router.use(UI_PREFIX, (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next();
      return;
    }
    secure(res);
    res.status(404).type('text/plain').send(`not found: ${req.originalUrl.slice(0, 200)}`);
  });
  return router;
}

/**
 * Puts the status page in front of the management API app: the returned app serves the pages
 * and hands every other request (all of `/api/…`, and unknown paths for the API's JSON 404) to
 * `api`. agent/main.ts uses it as `withStatusPage(createManagementApp(...), { logger })`.
 */
export function withStatusPage(api: express.Express, options: StatusPageOptions = {}): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(createStatusPage(options));
  app.use(api);
  return app;
}

/**
 * An express handler for `GET /api/v1/status` (mount it through the API's `extraRoutes`:
 * `api.get('/status', statusReportHandler(() => report()))`). A provider that throws is
 * passed to the API's error handler.
 */
export function statusReportHandler(provider: () => AgentStatusReport | Promise<AgentStatusReport>): RequestHandler {
  return (_req, res, next) => {
    Promise.resolve()
      .then(provider)
      .then((report) => {
        res.json(report);
      })
      .catch(next);
  };
}
