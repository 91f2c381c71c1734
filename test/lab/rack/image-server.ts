/**
 * @module An OS image server for the virtual rack: serves built images (and `<image>.sha256sum`
 * files) on a unix socket of this process, which the rack publishes inside its namespace
 * (`VirtualRackOptions.publish`) so rackside downloads from it like from a site's image server.
 */
import { createReadStream } from 'node:fs';
import { createServer } from 'node:http';
import { basename, join } from 'node:path';
import type { RackOsImage } from './os-image.js';

/** A running image server. */
export interface RackImageServer {
  socketPath: string;
  /** `METHOD path` of every request, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves `images` at `/<file name>` on `<dir>/images.sock`. */
export async function startRackImageServer(dir: string, images: readonly RackOsImage[]): Promise<RackImageServer> {
  const socketPath = join(dir, 'images.sock');
  const requests: string[] = [];
  const files = new Map(images.map((image) => [`/${basename(image.path)}`, image]));
  const server = createServer((req, res) => {
    requests.push(`${req.method ?? ''} ${req.url ?? ''}`);
    const path = req.url ?? '';
    const image = files.get(path);
    if (image !== undefined) {
      res.writeHead(200, { 'content-length': image.sizeBytes, 'content-type': 'application/octet-stream' });
      createReadStream(image.path).pipe(res);
      return;
    }
    const summed = files.get(path.replace(/\.sha256sum$/, ''));
    if (path.endsWith('.sha256sum') && summed !== undefined) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`${summed.sha256}  ${basename(summed.path)}\n`);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });
  return {
    socketPath,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => { resolve(); });
    }),
  };
}
