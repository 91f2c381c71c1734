/**
 * @module The steps of a ramdisk build and how far along a step is: the builder reports each
 * step as it starts (builder.ts `onProgress`), `rackside images build --progress json` prints
 * them one JSON line each, and the agent shows them as "step 3/5, 40 %". The percentage is the
 * share of steps finished before the current one (steps are not timed, so it is coarse).
 * @pure
 */

/** A build step, in build order. `iso` only for format `iso`. */
export type BuildPhase = 'kernel' | 'busybox' | 'initramfs' | 'compress' | 'write' | 'iso';

/** One progress report: the step that just started. */
export interface BuildProgress {
  phase: BuildPhase;
  /** 1-based index of the step. */
  step: number;
  /** Steps of this build (5 for `initrd`, 6 for `iso`). */
  total: number;
  /** Whole percent of the build done when this step started, 0–99. */
  percent: number;
}

const INITRD_STEPS: readonly BuildPhase[] = ['kernel', 'busybox', 'initramfs', 'compress', 'write'];

/** What each step does, as operators read it. */
export const BUILD_PHASE_TITLES: Readonly<Record<BuildPhase, string>> = {
  kernel: 'fetching the kernel',
  busybox: 'fetching busybox',
  initramfs: 'composing the initramfs',
  compress: 'compressing the initramfs',
  write: 'writing vmlinuz and initrd',
  iso: 'building the ISO',
};

/** The steps of a build of `format`, in order. */
export function buildSteps(format: 'initrd' | 'iso'): readonly BuildPhase[] {
  return format === 'iso' ? [...INITRD_STEPS, 'iso'] : INITRD_STEPS;
}

/** The progress report of `phase` in a build of `format`; throws RangeError for `iso` in an initrd build. */
export function progressOf(phase: BuildPhase, format: 'initrd' | 'iso'): BuildProgress {
  const steps = buildSteps(format);
  const index = steps.indexOf(phase);
  if (index < 0) throw new RangeError(`step ${phase} is not part of a ${format} build`);
  return { phase, step: index + 1, total: steps.length, percent: Math.floor((100 * index) / steps.length) };
}

/**
 * Parses one JSON line of `rackside images build --progress json`; undefined for any other line
 * (a line that is not a progress report is not an error: the build's own output passes through).
 */
export function parseProgressLine(line: string): BuildProgress | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { phase, format } = value as { phase?: unknown; format?: unknown };
  if (typeof phase !== 'string' || !(phase in BUILD_PHASE_TITLES) || (format !== 'initrd' && format !== 'iso')) return undefined;
  try {
    return progressOf(phase as BuildPhase, format);
  } catch {
    return undefined;
  }
}

/** The JSON line `--progress json` prints for `progress` of a `format` build. */
export function formatProgressLine(progress: BuildProgress, format: 'initrd' | 'iso'): string {
  return JSON.stringify({ phase: progress.phase, format, step: progress.step, total: progress.total, percent: progress.percent });
}
