/**
 * Crash consistency of the host lifecycle with a real agent process (fixture provisioner): the
 * agent is killed with SIGKILL at seeded random moments while hosts register, inspect, provision,
 * deprovision and are deleted, and while the test changes their targets through the API. After
 * every restart:
 * Each round changes the target of about 40 % of the hosts, then kills within 0–400 ms.
 * - every acknowledged apply is there (the host's image is the last acknowledged one);
 * - every observed state change is possible in the state machine's transition table, and a host
 *   whose target did not change never moves backwards on its way there (except upstream's
 *   re-prepare after deprovisioning, which cleared the applied root hints) (no lost step, no step
 *   done twice over: `provisioned` → `provisioning` again would be a duplicated provision);
 * - a host acknowledged as deleted never comes back.
 * At the end every host converges to its target (provisioned, available, or gone).
 *
 * CI runs 20 kills; the documented long run (docs/RELIABILITY.md) is
 * `RACKSIDE_CRASH_ITERATIONS=300 node --test dist/test/integration/crash-lifecycle.test.js`.
 * A failure names the seed and the iteration; `RACKSIDE_CRASH_SEED` replays it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TRANSITIONS } from '../../agent/host/states.js';
import type { ProvisioningState } from '../../agent/host/types.js';
import { removeDir, scratchDir, startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { hostManifests, TEST_IMAGE } from '../helpers/host-harness.js';
import { prng } from '../helpers/prng.js';

const KILLS = Number(process.env.RACKSIDE_CRASH_ITERATIONS ?? 20);
const SEED = Number(process.env.RACKSIDE_CRASH_SEED ?? 20261130);
const HOSTS = 6;
/** Slow enough that kills land inside operations (upstream's 10 s provisioning poll becomes 1 s). */
const AGENT_CONFIG = 'reconcile:\n  timeScale: 0.1\n';

type Target = 'provisioned' | 'available' | 'absent';

const STEADY = new Set<ProvisioningState>(['available', 'provisioned']);

/** The states a host passes through towards each target, in order (index = progress). */
const PATHS: Record<Exclude<Target, 'absent'>, readonly ProvisioningState[][]> = {
  provisioned: [['', 'registering', 'inspecting', 'preparing', 'available', 'provisioning', 'provisioned']],
  available: [
    ['', 'registering', 'inspecting', 'preparing', 'available'],
    ['provisioning', 'deprovisioning', 'available'],
    ['provisioned', 'deprovisioning', 'available'],
  ],
};

/** States reachable from `from` in the transition table (itself included). */
function reachable(from: ProvisioningState): Set<ProvisioningState> {
  const seen = new Set<ProvisioningState>([from]);
  const queue = [from];
  for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
    for (const t of TRANSITIONS) {
      if (t.from === s && !seen.has(t.to)) {
        seen.add(t.to);
        queue.push(t.to);
      }
    }
  }
  return seen;
}

/** Progress of `state` on the way to `target` from where the host was (`from`), or undefined when off-path. */
function progress(target: Target, from: ProvisioningState, state: ProvisioningState): number | undefined {
  if (target === 'absent') return undefined;
  const path = PATHS[target].find((p) => p.includes(from) && p.includes(state));
  return path === undefined ? undefined : path.indexOf(state);
}

interface Observed {
  /** The host as the API returned it (for failure messages). */
  raw: unknown;
  state: ProvisioningState;
  image: string | undefined;
  deleting: boolean;
  /** Root device hints recorded as applied (status.provisioning.rootDeviceHints). */
  hintsApplied: boolean;
}

async function observe(agent: AgentProcess): Promise<Map<string, Observed>> {
  const res = await fetch(`${agent.url}/api/v1/hosts`);
  assert.equal(res.status, 200);
  const body = (await res.json()) as {
    items: { metadata: { name: string; deletionTimestamp?: string }; spec: { image?: { url: string } }; status: { provisioning: { state: ProvisioningState; rootDeviceHints?: unknown } } }[];
  };
  return new Map(body.items.map((h) => [h.metadata.name, { raw: h, state: h.status.provisioning.state, image: h.spec.image?.url, deleting: h.metadata.deletionTimestamp !== undefined, hintsApplied: h.status.provisioning.rootDeviceHints !== undefined }]));
}

function manifest(name: string, target: Target): string {
  return JSON.stringify({ items: hostManifests(name, target === 'provisioned' ? { image: { ...TEST_IMAGE, url: `${TEST_IMAGE.url}?${name}` } } : {}) });
}

test(`SIGKILL at ${KILLS} random moments of host lifecycles loses no acknowledged write and no step (seed ${SEED})`, async (t) => {
  const dir = await scratchDir('crash-life');
  t.after(() => removeDir(dir));
  const rand = prng(SEED);
  const names = Array.from({ length: HOSTS }, (_, i) => `crash-${i}`);
  /** The last acknowledged target per host. */
  const targets = new Map<string, Target>(names.map((n, i) => [n, i % 2 === 0 ? 'provisioned' : 'available']));
  let agent = await startAgentProcess(dir, AGENT_CONFIG);
  t.after(() => agent.kill());
  for (const name of names) {
    const res = await fetch(`${agent.url}/api/v1/apply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: manifest(name, targets.get(name) ?? 'available') });
    assert.equal(res.status, 200, await res.text());
  }
  let previous = await observe(agent);
  /** Targets as of the previous observation (a change since then lifts the progress rule). */
  let previousTargets = new Map(targets);

  const changeTarget = async (name: string, target: Target): Promise<void> => {
    const url = target === 'absent' ? `${agent.url}/api/v1/hosts/${name}` : `${agent.url}/api/v1/apply`;
    const init: RequestInit = target === 'absent' ? { method: 'DELETE' } : { method: 'POST', headers: { 'content-type': 'application/json' }, body: manifest(name, target) };
    // Until the answer arrives the change may or may not be durable: both targets are accepted.
    pending.set(name, target);
    try {
      const res = await fetch(url, init);
      if (res.status === 200 || res.status === 202) targets.set(name, target);
    } catch {
      // killed mid-request: not acknowledged
    }
  };
  const pending = new Map<string, Target>();
  /** States of hosts caught mid-operation by a kill (the test is only worth something if there are some). */
  const midOperation: ProvisioningState[] = [];

  for (let i = 1; i <= KILLS; i++) {
    const where = `iteration ${i} (seed ${SEED})`;
    const changes: Promise<void>[] = [];
    // Sometimes change a target just before the kill, so the kill lands around the write.
    for (const name of names) {
      const current = targets.get(name);
      if (current === 'absent' || rand() < 0.6) continue;
      const next: Target = i > KILLS * 0.75 && rand() < 0.3 ? 'absent' : current === 'provisioned' ? 'available' : 'provisioned';
      changes.push(changeTarget(name, next));
    }
    await new Promise((r) => setTimeout(r, Math.floor(rand() * 400)));
    await agent.kill();
    await Promise.all(changes);
    agent = await startAgentProcess(dir, AGENT_CONFIG);
    const now = await observe(agent);
    for (const name of names) {
      const target = targets.get(name) ?? 'available';
      const maybe = pending.get(name);
      const accepted = new Set<Target>([target, ...(maybe === undefined ? [] : [maybe])]);
      const host = now.get(name);
      const before = previous.get(name);
      if (host === undefined) {
        assert.ok(accepted.has('absent'), `${where}: ${name} vanished while its target is ${target}`);
        targets.set(name, 'absent');
        continue;
      }
      // A change whose answer the kill swallowed may still have been written: adopt what is durable.
      if (maybe !== undefined) {
        const landed = maybe === 'absent' ? host.deleting : (maybe === 'provisioned') === (host.image !== undefined);
        if (landed) targets.set(name, maybe);
      }
      assert.ok(before !== undefined, `${where}: ${name} came back after it was gone`);
      // Acknowledged spec: the image the last acknowledged apply named (or the pending one).
      const imageOk = [...accepted].some((a) => a === 'absent' || (a === 'provisioned') === (host.image !== undefined));
      assert.ok(imageOk, `${where}: ${name} has image ${String(host.image)} but its acknowledged target is ${target}`);
      if (targets.get(name) === 'absent' && maybe === undefined) assert.ok(host.deleting, `${where}: ${name} lost its acknowledged deletion`);
      assert.ok(reachable(before.state).has(host.state), `${where}: ${name} jumped ${before.state || 'none'} → ${host.state} (not in the transition table)`);
      const unchanged = previousTargets.get(name) === targets.get(name) && maybe === undefined && !host.deleting;
      if (unchanged) {
        const was = progress(target, before.state, before.state);
        const is = progress(target, before.state, host.state);
        // (a host that was already on its way elsewhere before the target changed is judged from the next round)
        // Upstream: deprovisioning clears the applied root hints, so `available` goes through
        // `preparing` once more to apply them again — not a step backwards.
        const rePrepare = before.state === 'available' && host.state === 'preparing' && !before.hintsApplied;
        if (was !== undefined && is !== undefined && !rePrepare) {
          if (is < was) {
            const events = await (await fetch(`${agent.url}/api/v1/events?host=${name}`)).text();
            assert.fail(`${where}: ${name} went backwards ${before.state} → ${host.state} on its way to ${target}\nbefore: ${JSON.stringify(before.raw)}\nnow: ${JSON.stringify(host.raw)}\nevents: ${events}`);
          }
        }
      }
    }
    for (const host of now.values()) if (!STEADY.has(host.state)) midOperation.push(host.state);
    pending.clear();
    previous = now;
    previousTargets = new Map(targets);
  }

  assert.ok(midOperation.length >= Math.min(KILLS, 5), `kills caught only ${midOperation.length} hosts mid-operation: ${midOperation.join(', ')}`);
  t.diagnostic(`hosts caught mid-operation: ${midOperation.length} (${[...new Set(midOperation)].join(', ')})`);

  // Convergence: every host reaches its target once the kills stop.
  const deadline = Date.now() + 90_000;
  let last = await observe(agent);
  const converged = (): boolean => names.every((name) => {
    const target = targets.get(name);
    const host = last.get(name);
    return target === 'absent' ? host === undefined : host?.state === target;
  });
  while (!converged() && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    last = await observe(agent);
  }
  assert.ok(converged(), `not converged: ${names.map((n) => `${n}: ${last.get(n)?.state ?? 'gone'} (target ${targets.get(n) ?? '?'})`).join(', ')}`);
  assert.equal(await agent.stop(), 0);
});
