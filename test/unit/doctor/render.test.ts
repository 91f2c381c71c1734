/** Tests of the doctor table, JSON output and exit code (agent/doctor/render.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { doctorExitCode, renderDoctorJson, renderDoctorTable } from '../../../agent/doctor/render.js';
import type { CheckResult } from '../../../agent/doctor/types.js';

const OK: CheckResult = { check: 'config', status: 'ok', detail: '/etc/rackside/rackside.yaml parses', fix: '' };
const WARN: CheckResult = { check: 'ramdisk kernel', status: 'warn', detail: 'none yet', fix: 'set images.ramdisk.kernel' };
const FAIL: CheckResult = { check: 'other DHCP servers', status: 'fail', detail: 'rogue DHCP on eth1:\nserver 10.0.0.2', fix: 'stop it' };
const SKIP: CheckResult = { check: 'controller', status: 'skip', detail: 'no controller configured', fix: '' };

test('the table: CHECK | RESULT | DETAIL | FIX, aligned, cells on one line, then the counts', () => {
  assert.equal(renderDoctorTable([OK, WARN, FAIL, SKIP]), [
    'CHECK                RESULT   DETAIL                                FIX',
    'config               OK       /etc/rackside/rackside.yaml parses',
    'ramdisk kernel       WARN     none yet                              set images.ramdisk.kernel',
    'other DHCP servers   FAIL     rogue DHCP on eth1: server 10.0.0.2   stop it',
    'controller           SKIP     no controller configured',
    '',
    '1 ok, 1 warning, 1 failed, 1 skipped',
    '',
  ].join('\n'));
});

const exitCases: Record<string, [CheckResult[], number]> = {
  'all ok': [[OK, OK], 0],
  'warnings and skips do not fail': [[OK, WARN, SKIP], 0],
  'one failure fails': [[OK, WARN, FAIL], 1],
  'nothing checked': [[], 0],
};
for (const [name, [results, code]] of Object.entries(exitCases)) {
  test(`doctorExitCode: ${name}`, () => {
    assert.equal(doctorExitCode(results), code);
  });
}

test('-o json: ok flag, counts and every check', () => {
  const doc = JSON.parse(renderDoctorJson([OK, FAIL])) as { ok: boolean; counts: Record<string, number>; checks: CheckResult[] };
  assert.equal(doc.ok, false);
  assert.deepEqual(doc.counts, { ok: 1, warn: 0, fail: 1, skip: 0 });
  assert.deepEqual(doc.checks, [OK, FAIL]);
  assert.equal((JSON.parse(renderDoctorJson([OK])) as { ok: boolean }).ok, true);
});
