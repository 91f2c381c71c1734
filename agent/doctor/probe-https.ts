/**
 * @module The doctor's boot HTTPS probe (checks-https.ts): reads the listener's certificate —
 * `http.tls.cert`, or `<agent.stateDir>/boot-ca/server.crt` that the agent issues with
 * `http.tls: auto` (agent/boot/boot-ca.ts) — with node:crypto's X509Certificate, and looks for
 * the systemd-boot stub when `http.tlsBoot` is on.
 */
import { X509Certificate } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { bootCaDir } from '../boot/boot-ca.js';
import type { Config } from '../config.js';
import { UKI_STUB_X64 } from '../../images/index.js';
import type { BootHttpsProbe } from './types.js';

const DAY_MS = 86_400_000;

/** The boot HTTPS probe for `config` (undefined without `http.tls`); `bootHost` is the host in the boot URLs. */
export async function probeBootHttps(config: Config, bootHost: string, nowMs: number = Date.now(), stubPath: string = UKI_STUB_X64): Promise<BootHttpsProbe | undefined> {
  const tls = config.http.tls;
  if (tls === undefined) return undefined;
  const certPath = tls.cert ?? join(bootCaDir(config.agent.stateDir), 'server.crt');
  const probe: BootHttpsProbe = { certPath };
  if (config.http.tlsBoot === 'on') probe.stub = { path: stubPath, present: await access(stubPath).then(() => true, () => false) };
  let pem: string;
  try {
    pem = await readFile(certPath, 'utf8');
  } catch (err) {
    // With `auto` the agent issues it at start: a missing file is not an error.
    if (tls.cert === undefined && (err as NodeJS.ErrnoException).code === 'ENOENT') return probe;
    probe.error = (err as Error).message;
    return probe;
  }
  try {
    const cert = new X509Certificate(pem);
    const validTo = new Date(cert.validTo);
    const covers = isIP(bootHost) === 0 ? cert.checkHost(bootHost) !== undefined : cert.checkIP(bootHost) !== undefined;
    probe.certificate = { subject: cert.subject.replaceAll('\n', ', '), validTo: validTo.toISOString(), daysLeft: (validTo.getTime() - nowMs) / DAY_MS, coversBootHost: covers };
  } catch (err) {
    probe.error = `not a PEM certificate: ${(err as Error).message}`;
  }
  return probe;
}
