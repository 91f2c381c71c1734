/**
 * @module The boot HTTP server in a child process of http.bench.ts, so the benchmark's clients
 * and bookkeeping never share its event loop. Started with `fork(thisFile, [DIR])`, it serves
 * DIR at `/images/` on 127.0.0.1 (port 0) with a plan source that knows no host and an
 * `onEvent` listener that counts (the agent records every response, so events are built), sends
 * `{ port }`, then answers IPC commands: `mark` (reset the event-loop-delay histogram and the CPU
 * baseline), `read` (lag percentiles, CPU since the mark, server stats), `stop` (close and exit).
 */
import { readFileSync } from 'node:fs';
import { startBootHttpServer, type BootHttpStats } from '../../bootsvc/http/boot-http-server.js';
import { LoopDelaySampler } from './loop-delay-probe.js';

/** A command from the benchmark. */
export interface ChildCommand {
  id: number;
  cmd: 'mark' | 'read' | 'stop';
}

/** What the child measured since the last `mark`. */
export interface ChildReading {
  /** Event-loop lag per timer run in ms, beyond the 1 ms schedule (loop-delay-probe.ts). */
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** The wait ready work exceeded for 1 % of the time, ms (loop-delay-probe.ts): the goal's reading. */
  lagWaitP99Ms: number;
  /** User + system CPU of the whole process (main thread and libuv pool) in ms. */
  cpuMs: number;
  /** User + system CPU of the main thread (the event loop) alone in ms, from /proc (0 elsewhere). */
  mainThreadCpuMs: number;
  stats: BootHttpStats;
  /** Flight-recorder events received since start. */
  events: number;
  /** Files the server opened since the mark (open-file cache misses; 0–1 per phase when it works). */
  fileOpens: number;
  /** Answers sent by sendfile(2) since the mark, and small bodies that were not because their pages were not cached. */
  sendfileAnswers: number;
  sendfileCold: number;
}

/** A reply to a command (`port` once at start, `reading` for `read`). */
export interface ChildReply {
  id: number;
  port?: number;
  reading?: ChildReading;
}

/** CPU ms of this process's main thread (its task id is the pid), from /proc at 100 ticks/s. */
function mainThreadCpuMs(): number {
  try {
    const fields = readFileSync(`/proc/self/task/${String(process.pid)}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 10;
  } catch {
    return 0;
  }
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (dir === undefined || process.send === undefined) throw new Error('usage: fork(http-server-child.js, [DIR]) with an IPC channel');
  let events = 0;
  const server = await startBootHttpServer({
    host: '127.0.0.1',
    port: 0,
    mounts: { images: dir },
    plans: { target: () => Promise.resolve(undefined) },
    // RACKSIDE_BENCH_SENDFILE=0: every body through Node (to compare with native/sendfile).
    sendfile: process.env.RACKSIDE_BENCH_SENDFILE === '0' ? false : {},
    // The agent records every response (the flight recorder): building the events is part of the cost.
    onEvent: (event) => {
      if (event.kind === 'http') events += 1;
    },
  });
  const lag = new LoopDelaySampler();
  let cpuMark = process.cpuUsage();
  let mainMark = mainThreadCpuMs();
  let opensMark = 0;
  let sendfileMark = { answers: 0, cold: 0 };
  const send = (reply: ChildReply): void => {
    process.send?.(reply);
  };
  process.on('message', (message: ChildCommand) => {
    if (message.cmd === 'mark') {
      lag.takeWindow();
      cpuMark = process.cpuUsage();
      mainMark = mainThreadCpuMs();
      opensMark = server.stats().fileOpens;
      sendfileMark = { answers: server.stats().sendfileAnswers, cold: server.stats().sendfileCold };
      send({ id: message.id });
    } else if (message.cmd === 'read') {
      const cpu = process.cpuUsage(cpuMark);
      const window = lag.takeWindow();
      send({
        id: message.id,
        reading: {
          lagP50Ms: window.p50Ms,
          lagP99Ms: window.p99Ms,
          lagMaxMs: window.maxMs,
          lagWaitP99Ms: window.waitP99Ms,
          cpuMs: (cpu.user + cpu.system) / 1000,
          mainThreadCpuMs: mainThreadCpuMs() - mainMark,
          stats: server.stats(),
          events,
          fileOpens: server.stats().fileOpens - opensMark,
          sendfileAnswers: server.stats().sendfileAnswers - sendfileMark.answers,
          sendfileCold: server.stats().sendfileCold - sendfileMark.cold,
        },
      });
    } else {
      lag.stop();
      void server.stop().then(() => {
        send({ id: message.id });
        process.disconnect();
      });
    }
  });
  // The parent going away (crash, timeout) ends this child too.
  process.on('disconnect', () => {
    void server.stop().then(() => process.exit(0));
  });
  send({ id: 0, port: server.port });
}

main().catch((err: unknown) => {
  console.error('http-server-child:', err);
  process.exit(1);
});
