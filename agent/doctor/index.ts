/**
 * @module Public surface of agent/doctor (`rackside doctor`): the run, the real probes, the
 * pure checks and the table renderer.
 */
export { assetsDirOf, runDoctor, type DoctorOptions, type DoctorProbes } from './doctor.js';
export { createSystemProbes, type SystemProbeOptions } from './system-probes.js';
export { checkConfig, checkDhcpServers, checkInterface, checkPort, describeOffer, isRacksideHolder, portsToCheck, type PortNeed } from './checks.js';
export { checkAssets, checkBmcs, checkBusybox, checkClock, checkController, checkKernel, checkStateDir, CLOCK_BEHIND_LIMIT_MS, MIN_CLOCK_YEAR } from './checks-host.js';
export { countStatuses, doctorExitCode, DOCTOR_HEADERS, renderDoctorJson, renderDoctorTable } from './render.js';
export type * from './types.js';
