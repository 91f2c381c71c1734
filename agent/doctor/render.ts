/**
 * @module Rendering of `rackside doctor`'s results: the CHECK | RESULT | DETAIL | FIX table
 * with a one-line summary, the `-o json` document, and the exit code (0 when nothing failed;
 * warnings and skips never fail).
 * @pure
 */
import { renderTable } from '../cli/table.js';
import type { CheckResult, CheckStatus } from './types.js';

/** Table headers, in order. */
export const DOCTOR_HEADERS = ['CHECK', 'RESULT', 'DETAIL', 'FIX'] as const;

/** How many results have each status. */
export function countStatuses(results: readonly CheckResult[]): Record<CheckStatus, number> {
  const counts: Record<CheckStatus, number> = { ok: 0, warn: 0, fail: 0, skip: 0 };
  for (const r of results) counts[r.status]++;
  return counts;
}

/** 1 when any check failed, else 0. */
export function doctorExitCode(results: readonly CheckResult[]): 0 | 1 {
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}

/** Cells are one line: newlines and tabs become spaces. */
function cell(text: string): string {
  return text.replace(/[\t\r\n]+/g, ' ').trim();
}

/** The table, then `N ok, N warnings, N failed, N skipped`. */
export function renderDoctorTable(results: readonly CheckResult[]): string {
  const rows = results.map((r) => [cell(r.check), r.status.toUpperCase(), cell(r.detail), cell(r.fix)]);
  const c = countStatuses(results);
  const summary = `${c.ok} ok, ${c.warn} warning${c.warn === 1 ? '' : 's'}, ${c.fail} failed, ${c.skip} skipped`;
  return `${renderTable(DOCTOR_HEADERS, rows)}\n${summary}\n`;
}

/** The `-o json` document: `{ ok, counts, checks }`, pretty-printed. */
export function renderDoctorJson(results: readonly CheckResult[]): string {
  return `${JSON.stringify({ ok: doctorExitCode(results) === 0, counts: countStatuses(results), checks: results }, null, 2)}\n`;
}
