/**
 * @module Command-line runner for virtual Redfish BMCs (benchmarks run them in a separate
 * process so the servers do not share the event loop with the client; `npm run demo` may use
 * it too). Usage: node dist/test/lab/redfish/serve.js [--servers N] [--systems M] [--flavor
 * generic|idrac|ilo5] [--http] [--power-delay-ms MS]. Prints one JSON line
 * `{"urls": [...], "hosts": [...], "systems": M}` once listening; stops on SIGTERM/SIGINT or
 * when stdin closes.
 */
import { startVirtualRedfishBmc } from './virtual-bmc.js';
import type { VirtualBmcFlavor } from './state.js';

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback;
}

const servers = Number(option('servers', '1'));
const systems = Number(option('systems', '1'));
const flavor = option('flavor', 'generic') as VirtualBmcFlavor;
const bmcs = await Promise.all(Array.from({ length: servers }, () => startVirtualRedfishBmc({
  systems, flavor, https: !process.argv.includes('--http'), knobs: { powerDelayMs: Number(option('power-delay-ms', '0')) },
})));
console.log(JSON.stringify({ urls: bmcs.map((b) => b.url), hosts: bmcs.map((b) => b.host), systems }));
let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  void Promise.all(bmcs.map((b) => b.stop())).then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
