/**
 * @module Shared machinery of the virtual BMC's routes: JSON answers with ETags (strong
 * content hashes; iLO 5 flavor: weak, and a weak If-Match is refused with 412 as iLO does),
 * If-Match checks, delayed power operations, the boot sequence (one-time override consumed,
 * pending BIOS applied — on iDRAC only with a scheduled job — and firmware tasks scheduled for
 * the reset run), tasks with 202 monitors, and
 * event delivery: real HTTP POSTs to each subscriber with its `HttpHeaders`.
 */
import { createHash } from 'node:crypto';
import type { HostBootTarget } from './backend.js';
import { errorBody, Paths, type Payload } from './payloads.js';
import type { VirtualBmcState, VirtualSystem, VirtualTask } from './state.js';

/** A request as routes see it. */
export interface RouteRequest {
  readonly method: string;
  /** Path without query and trailing slash. */
  readonly path: string;
  readonly params: readonly string[];
  readonly body: unknown;
  readonly ifMatch: string | undefined;
}

/** A route's answer. */
export interface RouteResponse {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One route. */
export interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  handle(req: RouteRequest): Promise<RouteResponse> | RouteResponse;
}

/** Helpers shared by the route files. */
export class LabContext {
  readonly state: VirtualBmcState;
  readonly paths: Paths;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #pending = new Set<Promise<unknown>>();

  constructor(state: VirtualBmcState) {
    this.state = state;
    this.paths = new Paths(state);
  }

  /** ETag of a payload (content hash; weak for iLO 5). */
  etagOf(payload: unknown): string {
    const tag = `"${createHash('sha1').update(JSON.stringify(payload)).digest('hex').slice(0, 16)}"`;
    return this.state.flavor === 'ilo5' ? `W/${tag}` : tag;
  }

  /** 200 with the payload and its ETag. */
  ok(payload: Payload): RouteResponse {
    const etag = this.etagOf(payload);
    return { status: 200, body: this.state.flavor === 'ilo5' ? { ...payload, '@odata.etag': etag } : payload, headers: { etag } };
  }

  /** An error answer with a Redfish error body. */
  error(status: number, messageId: string, message: string): RouteResponse {
    return { status, body: errorBody(messageId, message) };
  }

  /** Refuses a PATCH whose If-Match does not match `current` (412), or lacks one when required (428). */
  checkIfMatch(current: Payload, ifMatch: string | undefined): RouteResponse | undefined {
    if (ifMatch === undefined) {
      return this.state.knobs.requireIfMatch ? this.error(428, 'Base.1.16.PreconditionRequired', 'If-Match is required') : undefined;
    }
    if (ifMatch === '*') return undefined;
    const strong = this.etagOf(current).replace(/^W\//, '');
    if (this.state.flavor === 'ilo5' && ifMatch.startsWith('W/')) {
      return this.error(412, 'Base.1.16.PreconditionFailed', 'weak ETags are not accepted in If-Match');
    }
    return ifMatch.replace(/^W\//, '') === strong ? undefined : this.error(412, 'Base.1.16.PreconditionFailed', 'ETag does not match');
  }

  /** Runs `fn` after `ms` (at once when 0); errors are swallowed, timers cleared on stop. */
  schedule(ms: number, fn: () => Promise<void>): void {
    const run = (): void => {
      const p = fn().catch(() => undefined);
      this.#pending.add(p);
      void p.finally(() => this.#pending.delete(p));
    };
    if (ms <= 0) {
      run();
      return;
    }
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, ms);
    this.#timers.add(timer);
  }

  /** The boot target of the next boot; a one-time override is consumed. */
  takeBootTarget(sys: VirtualSystem): HostBootTarget {
    const { boot } = sys;
    const target = boot.enabled === 'Disabled' || boot.target === 'None' ? 'Hdd' : boot.target;
    if (boot.enabled === 'Once') sys.boot = { ...boot, enabled: 'Disabled', target: 'None' };
    return target;
  }

  /** What happens at every boot besides the backend: pending BIOS settings are applied. */
  applyPendingAtBoot(sys: VirtualSystem): void {
    const jobs = [...this.state.jobs.values()].filter((j) => j.state === 'Scheduled');
    if (this.state.flavor === 'idrac' && jobs.length === 0) return; // iDRAC applies only through a job
    Object.assign(sys.bios, sys.pendingBios);
    for (const key of Object.keys(sys.pendingBios)) Reflect.deleteProperty(sys.pendingBios, key);
    for (const job of jobs) job.state = 'Completed';
  }

  /** Runs the tasks scheduled for the next boot (`updatesApplyAtReset`). */
  async runTasksAtBoot(): Promise<void> {
    for (const t of this.state.tasks.values()) {
      if (t.state !== 'Pending') continue;
      t.state = 'Running';
      t.pollsLeft = 0;
      await this.pollTask(t);
    }
  }

  /** Powers on (boot) or resets through the backend, honouring override and pending BIOS. */
  async bootSystem(sys: VirtualSystem, how: 'on' | 'reset'): Promise<void> {
    const target = this.takeBootTarget(sys);
    this.applyPendingAtBoot(sys);
    await this.runTasksAtBoot();
    // HttpBootUri applies to UefiHttp boots only (ComputerSystem v1_9 Boot.HttpBootUri).
    const options = target === 'UefiHttp' && sys.httpBootUri !== null && sys.httpBootUri !== '' ? { httpBootUri: sys.httpBootUri } : undefined;
    if (how === 'on') await sys.backend.powerOn(target, options);
    else await sys.backend.reset(target, options);
    this.emitEvent('ResourceEvent.1.0.ResourcePowerStateChanged', `System ${sys.id} powered on`, `Systems/${sys.id}`);
  }

  /** Starts a task; its monitor answers 202 `taskPolls` times, then `run` executes. */
  startTask(name: string, run: () => Promise<void>): VirtualTask {
    const id = String(this.state.nextId());
    const t: VirtualTask = { id, name, pollsLeft: this.state.knobs.taskPolls, state: 'Running', messages: [`${name} started`], run };
    this.state.tasks.set(id, t);
    return t;
  }

  /** 202 Accepted for a task: Location is its monitor, the body the Task. */
  accepted(t: VirtualTask, taskPayload: Payload): RouteResponse {
    return { status: 202, body: taskPayload, headers: { location: this.paths.at(`TaskService/TaskMonitors/${t.id}`), 'retry-after': '0' } };
  }

  /** One poll of a task: counts down, then runs it once. */
  async pollTask(t: VirtualTask): Promise<void> {
    if (t.state !== 'Running') return;
    if (t.pollsLeft > 0) {
      t.pollsLeft -= 1;
      return;
    }
    try {
      await t.run();
      t.state = 'Completed';
      t.messages.push('Task completed');
    } catch (err) {
      t.state = 'Exception';
      t.messages.push(err instanceof Error ? err.message : String(err));
    }
  }

  /** POSTs an Event to every subscriber (with its headers); deliveries are recorded. */
  emitEvent(messageId: string, message: string, originRest: string): void {
    for (const sub of this.state.subscriptions.values()) {
      const body = {
        '@odata.type': '#Event.v1_9_0.Event', Id: String(this.state.nextId()), Name: 'Event', Context: sub.context,
        Events: [{
          EventType: 'Alert', EventId: String(this.state.nextId()), MessageId: messageId, Message: message,
          Severity: 'OK', OriginOfCondition: this.paths.link(originRest), EventTimestamp: new Date().toISOString(),
        }],
      };
      const delivery = fetch(sub.destination, {
        method: 'POST', headers: { ...sub.headers, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(5000),
      }).then(
        async (res) => {
          await res.arrayBuffer();
          this.state.deliveries.push({ destination: sub.destination, status: res.status, error: undefined });
        },
        (err: unknown) => { this.state.deliveries.push({ destination: sub.destination, status: undefined, error: String(err) }); },
      );
      this.#pending.add(delivery);
      void delivery.finally(() => this.#pending.delete(delivery));
    }
  }

  /** Clears timers and waits for in-flight backend operations and deliveries. */
  async stop(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    await Promise.allSettled([...this.#pending]);
  }
}
