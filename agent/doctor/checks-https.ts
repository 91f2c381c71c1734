/**
 * @module `rackside doctor`'s word on boot HTTPS (docs/https-boot.md): the TLS listener's
 * certificate — readable, not expired, valid for the host name or address in the boot URLs
 * (UEFI firmware checks it, EDK2's TlsLib by subjectAltName) — and, with `http.tlsBoot: on`, the
 * systemd-boot stub that unified images are built from, without which UEFI HTTP boot clients
 * fall back to the plain iPXE chain.
 * @pure
 */
import type { Config } from '../config.js';
import type { BootHttpsProbe, CheckResult } from './types.js';

/** Days before expiry from which an operator's certificate is a warning (the agent re-issues its own at 30). */
const RENEW_DAYS = 30;

function certificateLine(config: Config, probe: BootHttpsProbe, bootHost: string): CheckResult {
  const check = 'boot HTTPS certificate';
  const operator = config.http.tls?.cert !== undefined;
  const cert = probe.certificate;
  if (cert === undefined) {
    if (!operator && probe.error === undefined) return { check, status: 'ok', detail: `none in ${probe.certPath} yet: the agent issues it from its boot CA when it starts`, fix: '' };
    return { check, status: 'fail', detail: `${probe.certPath}: ${probe.error ?? 'missing'}`, fix: operator ? 'point http.tls.cert and http.tls.key at a readable PEM certificate chain and key' : `remove ${probe.certPath} and restart the agent: it issues a new one from its boot CA` };
  }
  const what = `${probe.certPath} (${cert.subject}), valid until ${cert.validTo}`;
  if (cert.daysLeft < 0) return { check, status: 'fail', detail: `${what}: expired`, fix: operator ? 'renew the certificate named by http.tls.cert' : 'restart the agent: it issues a new one' };
  if (!cert.coversBootHost) {
    return { check, status: 'fail', detail: `${what}: not valid for ${bootHost}, the host in the boot URLs (firmware refuses the handshake)`, fix: operator ? `issue it with subjectAltName IP:${bootHost} (or DNS:${bootHost})` : 'restart the agent: it issues it again for the current addresses' };
  }
  if (operator && cert.daysLeft < RENEW_DAYS) return { check, status: 'warn', detail: `${what}: ${Math.floor(cert.daysLeft)} days left`, fix: 'renew the certificate named by http.tls.cert' };
  return { check, status: 'ok', detail: `${what}, for ${bootHost}`, fix: '' };
}

/** The boot HTTPS lines: none without `http.tls`; the certificate; the stub with `http.tlsBoot: on`. */
export function checkBootHttps(config: Config, probe: BootHttpsProbe | undefined, bootHost: string): CheckResult[] {
  if (config.http.tls === undefined || probe === undefined) return [];
  const lines = [certificateLine(config, probe, bootHost)];
  if (probe.stub !== undefined) {
    const { path, present } = probe.stub;
    lines.push(present
      ? { check: 'unified image stub', status: 'ok', detail: path, fix: '' }
      : { check: 'unified image stub', status: 'fail', detail: `${path} missing: with http.tlsBoot on, UEFI HTTP boot hosts get the plain iPXE chain instead of their unified image over HTTPS`, fix: 'apt-get install systemd-boot-efi' });
  }
  return lines;
}
