/**
 * @module A lanplus session against the in-process fake BMC (fake-lanplus-bmc.ts), for the IPMI
 * session and cipher-negotiation tests: one user `admin` with {@link FAKE_BMC_PASSWORD}, short
 * attempt timeouts, no keepalive. Everything opened here is closed after the test file's tests.
 */
import { after } from 'node:test';
import { decodeGetChassisStatus, encodeGetChassisStatus } from '../../../drivers/ipmi/commands.js';
import { IpmiSession, type IpmiSessionOptions } from '../../../drivers/ipmi/ipmi-session.js';
import { FakeLanplusBmc, type FakeLanplusBmcOptions } from './fake-lanplus-bmc.js';

/** The password of the fake BMC's `admin` user. */
export const FAKE_BMC_PASSWORD = 'Sup3r-Secret';

const cleanups: (() => Promise<void>)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

/** Runs `cleanup` after the file's tests (in reverse order of registration). */
export function onCleanup(...cleanup: (() => Promise<void>)[]): void {
  cleanups.push(...cleanup);
}

/** Starts a fake BMC and a session to it; both are closed after the file's tests. */
export async function openFakeSession(
  bmcOptions: FakeLanplusBmcOptions = {}, sessionOptions: Partial<IpmiSessionOptions> = {},
): Promise<{ bmc: FakeLanplusBmc; session: IpmiSession }> {
  const bmc = await FakeLanplusBmc.start({ users: [{ name: 'admin', password: FAKE_BMC_PASSWORD }], ...bmcOptions });
  const session = new IpmiSession({
    host: '127.0.0.1', port: bmc.port, username: 'admin', password: FAKE_BMC_PASSWORD, attemptTimeoutMs: 150, keepaliveMs: 0, ...sessionOptions,
  });
  cleanups.push(async () => { await session.close(); await bmc.stop(); });
  return { bmc, session };
}

/** Get Chassis Status over `session`. */
export function chassisStatus(session: IpmiSession): Promise<ReturnType<typeof decodeGetChassisStatus>> {
  return session.call(encodeGetChassisStatus(), decodeGetChassisStatus);
}
