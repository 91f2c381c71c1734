/**
 * @module Serving a test's request handler (an express app) on an ephemeral loopback port for the
 * length of the test.
 */
import type { RequestListener, Server } from 'node:http';
import { createServer } from 'node:http';
import type { TestContext } from 'node:test';

/**
 * Listens on 127.0.0.1 (port chosen by the kernel) and closes the server, its keep-alive
 * connections included, when `t` ends.
 * @returns the base URL, `http://127.0.0.1:PORT` (no trailing slash).
 */
export async function listenOnLoopback(t: TestContext, handler: RequestListener): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => { resolve(); });
  }));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the test server has no TCP address');
  return `http://127.0.0.1:${String(address.port)}`;
}
