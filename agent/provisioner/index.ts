/**
 * @module Public surface of agent/provisioner: the API, its errors and result helpers.
 * Implementations live beside it (fixture.ts, demo.ts, local/).
 */
export type * from './provisioner.js';
export * from './errors.js';
export * from './result.js';
export * from './host-data.js';
