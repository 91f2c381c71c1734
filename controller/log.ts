/**
 * @module The controller's logger seam: the three levels it uses, so modules take a logger
 * without depending on pino (controller/main.ts makes the real one; tests pass a recorder).
 */

/** A structured logger (pino's call shape). */
export interface ControllerLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** A logger that drops everything. */
export const SILENT_LOG: ControllerLog = { info: () => undefined, warn: () => undefined, error: () => undefined };
