/**
 * @module The file side of the boot HTTP server: boot assets by name and files under the
 * mounts and `http.root`, answered from the open-file cache (open-file-cache.ts) through the
 * realpath jails (file-jail.ts) with send-file.ts. {@link fileRouteOf} is the fast path's
 * decision, made from the request line alone: a GET or HEAD of a plain file is answered here,
 * below express; anything else (generated scripts, probes, refusals, other methods, the paths
 * the extra routes own) goes to express, whose router comes back here for file routes too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { realpath } from 'node:fs/promises';
import { routeBootPath, type BootRoute } from '../ipxe/boot-paths.js';
import type { FileJail } from './file-jail.js';
import type { KernelSender } from './kernel-send.js';
import type { CachedFile, OpenFileCache, PathResolution } from './open-file-cache.js';
import { sendText, type BootHttpLogger, type BootHttpStats, type ResponseNotes } from './response-recorder.js';
import { sendFile, type SentFile } from './send-file.js';
import type { BytePacer } from './send-pacer.js';

/** A route to a file: a boot asset by name, or a path under a mount or the root. */
export type FileRoute = Extract<BootRoute, { kind: 'asset' | 'file' }>;

/** What the file routes serve from. */
export interface FileRoutes {
  root: FileJail | undefined;
  /** Mount prefix (one segment) → its jail. */
  mounts: ReadonlyMap<string, FileJail>;
  /** Asset name → absolute path. */
  assets: ReadonlyMap<string, string>;
  assetNames: ReadonlySet<string>;
  /** Lower-case normalized path prefixes (`/ramdisk/v1/`) never taken by the fast path. */
  expressPrefixes: readonly string[];
  cache: OpenFileCache;
  stats: BootHttpStats;
  logger: BootHttpLogger | undefined;
  /** Paces file bodies to the boot HTTP budget (send-pacer.ts); none: as fast as clients read. */
  pacer?: BytePacer | undefined;
  /** Sends small cached bodies by sendfile(2) (kernel-send.ts); none: every body through Node. */
  kernel?: KernelSender | undefined;
}

/**
 * The file route `req` asks for when the fast path may answer it: a GET or HEAD whose path
 * routes (boot-paths.ts) to an asset or a file outside `expressPrefixes`; otherwise undefined.
 */
export function fileRouteOf(req: IncomingMessage, routes: FileRoutes): FileRoute | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const url = req.url ?? '';
  if (!url.startsWith('/')) return undefined;
  const query = url.indexOf('?');
  const route = routeBootPath(query < 0 ? url : url.slice(0, query), { assetNames: routes.assetNames, percentEncoded: true });
  if (route.kind === 'asset') return route;
  if (route.kind !== 'file') return undefined;
  if (routes.expressPrefixes.length > 0) {
    // express matches routes case-insensitively: so does this exclusion.
    const path = `/${route.path.toLowerCase()}/`;
    if (routes.expressPrefixes.some((prefix) => path.startsWith(prefix))) return undefined;
  }
  return route;
}

async function resolveAsset(path: string | undefined): Promise<PathResolution> {
  if (path === undefined) return { kind: 'not-found' };
  try {
    return { kind: 'path', real: await realpath(path) };
  } catch {
    return { kind: 'not-found' };
  }
}

function resolveRoute(route: FileRoute, routes: FileRoutes): Promise<PathResolution> {
  if (route.kind === 'asset') return resolveAsset(routes.assets.get(route.name));
  const slash = route.path.indexOf('/');
  const mount = slash < 0 ? undefined : routes.mounts.get(route.path.slice(0, slash));
  if (mount !== undefined) return mount.resolve(route.path.slice(slash + 1));
  return routes.root === undefined ? Promise.resolve({ kind: 'not-found' }) : routes.root.resolve(route.path);
}

/**
 * Answers a file route: the file with Range/conditional semantics, 404 when it is missing or
 * not a regular file (no listings), 403 for a symlink out of its root. Settles when the
 * response has closed; the file goes back to the cache then.
 */
export async function serveFileRoute(route: FileRoute, req: IncomingMessage, res: ServerResponse, notes: ResponseNotes, routes: FileRoutes): Promise<void> {
  const key = route.kind === 'asset' ? `a:${route.name}` : `f:${route.path}`;
  let file: CachedFile | undefined = routes.cache.take(key);
  if (file === undefined) {
    const found = await routes.cache.acquire(key, () => resolveRoute(route, routes));
    if (found.kind === 'escape') {
      routes.stats.refused += 1;
      routes.logger?.warn({ path: (req.url ?? '').split('?')[0], target: found.target }, 'boot HTTP: refused a symlink out of the served root');
      sendText(req, res, 403, 'refused: outside the served root\n', notes, { servedAs: 'refused', detail: 'symlink out of the root' });
      return;
    }
    if (found.kind !== 'file') {
      sendText(req, res, 404, 'not found\n', notes, { servedAs: route.kind, detail: found.kind });
      return;
    }
    file = found.file;
  }
  notes.servedAs = route.kind;
  const sent: SentFile = { status: 0, bytes: 0, completed: false };
  notes.sent = sent;
  try {
    await sendFile(req, res, file, route.kind === 'asset' ? route.name : route.path, sent, routes.pacer, routes.kernel);
  } finally {
    routes.cache.release(file);
  }
}
