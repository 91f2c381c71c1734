/**
 * @module The Debian package that owns a file on the head node (`dpkg-query -S`, dpkg-query(1)),
 * trying the merged-/usr twin of the path too, since dpkg may have registered `/sbin/x` for
 * what is found as `/usr/sbin/x`.
 */
import { runCommand } from './files.js';

/** Returns the merged-/usr twin of a path (`/usr/sbin/x` ↔ `/sbin/x`), which dpkg may have registered instead. */
export function usrMergeTwin(path: string): string {
  return path.startsWith('/usr/') ? path.slice(4) : `/usr${path}`;
}

/** Resolves with the Debian package that owns `path` and its version, or undefined (not from a package, no dpkg). */
export async function owningPackage(path: string): Promise<{ name: string; version: string } | undefined> {
  for (const candidate of [path, usrMergeTwin(path)]) {
    try {
      const out = await runCommand('dpkg-query', ['-S', candidate]);
      const name = /^([a-z0-9][a-z0-9+.-]+)(?::[a-z0-9-]+)?(?:, [^:]*)?: \//.exec(out.toString('utf8'))?.[1];
      if (name === undefined) continue;
      const version = (await runCommand('dpkg-query', ['-W', '-f', '${Version}', name])).toString('utf8').trim();
      return { name, version };
    } catch {
      // not registered under this spelling of the path, or no dpkg on this host
    }
  }
  return undefined;
}
