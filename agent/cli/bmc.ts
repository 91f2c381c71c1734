/**
 * @module `rackside bmc ADDRESS …`: an operator's tool that runs a BMC driver directly, without
 * the agent — one syntax for every scheme (`ipmi://`, `redfish://`, `idrac-virtualmedia://`,
 * `fake://` …), like `ipmitool` or `redfishtool`. The command line is checked completely before
 * any secret is read or packet sent; the password comes from `--password-file` or
 * `RACKSIDE_BMC_PASSWORD` (never from argv: a command line is world-readable in /proc and kept in
 * shell history); the driver comes from the built-in registry and is closed at the end (Redfish
 * logout, IPMI Close Session). BMC failures exit with the codes of bmc-output.ts.
 */
import {
  DriverRegistry, isBmcError, parseBmcAddress, waitForPowerState,
  type BmcAddress, type BmcCredentials, type BmcDriver, type BmcInfo, type BootDevice, type BootMode, type CapabilityName,
  type PowerAction,
} from '../../drivers/index.js';
import { parseDuration } from './args.js';
import {
  BMC_USAGE, BmcExitCode, bmcExitCodeOf, renderBiosSettings, renderBmcInfo, renderBootOverride, renderFirmware, renderInventory,
  renderMediaSlots, renderSecureBoot, renderStructured, selectBiosSettings, unsupportedMessage, withScheme,
} from './bmc-output.js';
import type { CommandContext } from './commands.js';
import { probeCommand } from './bmc-probe.js';
import { CliError, ExitCode } from './io.js';

/** Options of {@link createBmcCommand} (tests inject a registry over a shared fake pool). */
export interface BmcCommandOptions {
  /** Builds the driver registry (tests); default: the CLI's built-in drivers (`io.createDriverRegistry`). */
  readonly createRegistry?: () => DriverRegistry;
  /** Poll interval of `--wait`; default 1000 ms. */
  readonly pollMs?: number;
}

/** Default `--timeout` of `power … --wait` (Ironic's `[conductor]power_state_change_timeout`). */
export const DEFAULT_POWER_WAIT = '60s';
/** Default `--timeout` of `power soft --wait` (Ironic's `[conductor]soft_power_off_timeout`). */
export const DEFAULT_SOFT_WAIT = '10m';

const POWER_ACTIONS: Readonly<Record<string, PowerAction>> = {
  on: 'on', off: 'off', soft: 'soft-off', 'soft-reset': 'soft-reset', cycle: 'cycle', reset: 'reset',
};
/** The state a power action ends in (what `--wait` waits for). */
const POWER_TARGET: Readonly<Record<PowerAction, 'on' | 'off'>> = {
  on: 'on', off: 'off', 'soft-off': 'off', 'soft-reset': 'on', cycle: 'on', reset: 'on',
};
const BOOT_DEVICES: Readonly<Record<string, BootDevice>> = { pxe: 'pxe', disk: 'disk', cd: 'cdrom', http: 'uefi-http', bios: 'bios' };

type Format = 'text' | 'json' | 'yaml';

/** What a parsed `rackside bmc` command does once it has a driver. */
interface Plan {
  /** Capability checked before running; undefined for `info` (always answers). */
  readonly capability: CapabilityName | undefined;
  readonly run: (driver: BmcDriver, emit: (value: unknown, text: string) => void) => Promise<number>;
}

/** A usage error; `full` appends the whole usage text (for a missing or unknown COMMAND). */
const usage = (message: string, full = false): CliError => new CliError(ExitCode.usage, full ? `${message}\n${BMC_USAGE}` : message);

function words(ctx: CommandContext, from: number): string[] {
  return ctx.args.positionals.slice(from);
}

/** Refuses options that do not belong to this subcommand (`--uefi` with `power`, …). */
function onlyWith(ctx: CommandContext, allowed: readonly string[], what: string): void {
  const scoped = ['uefi', 'legacy', 'persistent', 'wait', 'timeout'] as const;
  for (const name of scoped) {
    if (ctx.args.options[name] !== undefined && !allowed.includes(name)) throw usage(`option --${name} does not apply to "rackside bmc ADDRESS ${what}"`);
  }
}

function exactly(args: readonly string[], count: number, what: string): void {
  if (args.length > count) throw usage(`unexpected argument "${args[count] ?? ''}" after "${what}"`);
}

function planPower(ctx: CommandContext, args: readonly string[], pollMs: number): Plan {
  const word = args[0];
  if (word === 'status') {
    onlyWith(ctx, [], 'power status');
    exactly(args, 1, 'power status');
    return {
      capability: 'power',
      run: async (driver, emit) => {
        const state = await driver.power.getPowerState();
        emit({ address: driver.address.raw, power: state }, `${state}\n`);
        return ExitCode.ok;
      },
    };
  }
  const action = word === undefined || !Object.hasOwn(POWER_ACTIONS, word) ? undefined : POWER_ACTIONS[word];
  if (word === undefined || action === undefined) throw usage(`power needs status|on|off|soft|soft-reset|cycle|reset, got ${word === undefined ? 'nothing' : `"${word}"`}`);
  exactly(args, 1, `power ${word}`);
  onlyWith(ctx, ['wait', 'timeout'], `power ${word}`);
  const { wait = 'false', timeout } = ctx.args.options;
  if (wait !== 'true' && wait !== 'false') throw usage(`--wait must be true or false, got "${wait}"`);
  if (timeout !== undefined && wait !== 'true') throw usage('--timeout applies with --wait only');
  const timeoutText = timeout ?? (action === 'soft-off' ? DEFAULT_SOFT_WAIT : DEFAULT_POWER_WAIT);
  const timeoutMs = parseDuration(timeoutText);
  if (timeoutMs === undefined) throw usage(`--timeout must be a duration like 30s, 5m, 1h, got "${timeoutText}"`);
  const target = POWER_TARGET[action];
  return {
    capability: 'power',
    run: async (driver, emit) => {
      await driver.power.setPower(action);
      if (wait === 'true') {
        await waitForPowerState(driver.power, target, { timeoutMs, pollMs, address: driver.address.raw, sleep: ctx.io.sleep, now: ctx.io.now });
      }
      const waited = wait === 'true';
      emit({ address: driver.address.raw, action: word, requested: true, power: waited ? target : undefined },
        `power ${word} requested${waited ? `; power is ${target}` : ''}\n`);
      return ExitCode.ok;
    },
  };
}

function planBoot(ctx: CommandContext, args: readonly string[]): Plan {
  const word = args[0];
  if (word === 'status') {
    onlyWith(ctx, [], 'boot status');
    exactly(args, 1, 'boot status');
    return {
      capability: 'bootDevice',
      run: async (driver, emit) => {
        const override = await driver.bootDevice.getBootDevice();
        emit({ address: driver.address.raw, ...override }, renderBootOverride(override));
        return ExitCode.ok;
      },
    };
  }
  const device = word === undefined || !Object.hasOwn(BOOT_DEVICES, word) ? undefined : BOOT_DEVICES[word];
  if (word === undefined || device === undefined) throw usage(`boot needs pxe|disk|cd|http|bios|status, got ${word === undefined ? 'nothing' : `"${word}"`}`);
  exactly(args, 1, `boot ${word}`);
  onlyWith(ctx, ['uefi', 'legacy', 'persistent'], `boot ${word}`);
  const { uefi, legacy, persistent = false } = ctx.args.options;
  if (uefi === true && legacy === true) throw usage('--uefi and --legacy exclude each other');
  const mode: BootMode | undefined = uefi === true ? 'uefi' : legacy === true ? 'legacy' : undefined;
  if (device === 'uefi-http' && mode === 'legacy') throw usage('UEFI HTTP boot (boot http) needs UEFI mode; drop --legacy');
  return {
    capability: 'bootDevice',
    run: async (driver, emit) => {
      await driver.bootDevice.setBootDevice(device, { persistent, ...(mode === undefined ? {} : { mode }) });
      emit({ address: driver.address.raw, device, mode, persistent },
        `boot override set: ${word}, ${mode ?? 'current mode'}, ${persistent ? 'persistent' : 'next boot only'}\n`);
      return ExitCode.ok;
    },
  };
}

function planVirtualMedia(ctx: CommandContext, args: readonly string[]): Plan {
  onlyWith(ctx, [], 'vmedia');
  const [word, url] = args;
  if (word === 'insert') {
    if (url === undefined) throw usage('vmedia insert needs the image URL');
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw usage(`vmedia insert needs an http:// or https:// URL the BMC can fetch, got "${url}"`);
    exactly(args, 2, 'vmedia insert URL');
    return {
      capability: 'virtualMedia',
      run: async (driver, emit) => {
        await driver.virtualMedia.insertMedia({ imageUrl: url });
        emit({ address: driver.address.raw, action: 'insert', device: 'cd', imageUrl: url }, `inserted ${url} (cd)\n`);
        return ExitCode.ok;
      },
    };
  }
  if (word === 'eject' || word === 'status') {
    exactly(args, 1, `vmedia ${word}`);
    return {
      capability: 'virtualMedia',
      run: async (driver, emit) => {
        if (word === 'eject') {
          await driver.virtualMedia.ejectMedia();
          emit({ address: driver.address.raw, action: 'eject', device: 'cd' }, 'ejected (cd)\n');
        } else {
          const slots = await driver.virtualMedia.getMediaStatus();
          emit({ address: driver.address.raw, slots }, renderMediaSlots(slots));
        }
        return ExitCode.ok;
      },
    };
  }
  throw usage(`vmedia needs insert URL|eject|status, got ${word === undefined ? 'nothing' : `"${word}"`}`);
}

function parseBiosChanges(pairs: readonly string[]): Record<string, string> {
  if (pairs.length === 0) throw usage('bios set needs NAME=VALUE pairs');
  const changes: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usage(`bios set takes NAME=VALUE, got "${pair}"`);
    const name = pair.slice(0, eq);
    if (Object.hasOwn(changes, name)) throw usage(`BIOS attribute ${name} is given twice`);
    changes[name] = pair.slice(eq + 1);
  }
  return changes;
}

function planBios(ctx: CommandContext, args: readonly string[]): Plan {
  onlyWith(ctx, [], 'bios');
  const [word, ...rest] = args;
  if (word === 'get') {
    return {
      capability: 'biosSettings',
      run: async (driver, emit) => {
        const { selected, unknown } = selectBiosSettings(await driver.biosSettings.getBiosSettings(), rest);
        if (unknown.length > 0) throw new CliError(ExitCode.notFound, `${driver.address.raw}: unknown BIOS attribute${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`);
        emit({ address: driver.address.raw, ...selected }, renderBiosSettings(selected));
        return ExitCode.ok;
      },
    };
  }
  if (word === 'set') {
    const changes = parseBiosChanges(rest);
    return {
      capability: 'biosSettings',
      run: async (driver, emit) => {
        const staged = await driver.biosSettings.applyBiosSettings(changes);
        const names = Object.keys(changes).join(', ');
        const when = staged.rebootRequired ? '; they apply at the next reboot' : '';
        emit({ address: driver.address.raw, staged: changes, rebootRequired: staged.rebootRequired, taskId: staged.taskId },
          `staged ${names}${when}${staged.taskId === undefined ? '' : ` (BMC task ${staged.taskId})`}\n`);
        return ExitCode.ok;
      },
    };
  }
  throw usage(`bios needs get [NAME...]|set NAME=VALUE..., got ${word === undefined ? 'nothing' : `"${word}"`}`);
}

function planSecureBoot(ctx: CommandContext, args: readonly string[]): Plan {
  onlyWith(ctx, [], 'secureboot');
  const word = args[0];
  if (word !== 'on' && word !== 'off' && word !== 'status') throw usage(`secureboot needs on|off|status, got ${word === undefined ? 'nothing' : `"${word}"`}`);
  exactly(args, 1, `secureboot ${word}`);
  return {
    capability: 'secureBoot',
    run: async (driver, emit) => {
      if (word === 'status') {
        const state = await driver.secureBoot.getSecureBoot();
        emit({ address: driver.address.raw, ...state }, renderSecureBoot(state));
      } else {
        await driver.secureBoot.setSecureBoot(word === 'on');
        emit({ address: driver.address.raw, enabled: word === 'on' }, `Secure Boot ${word === 'on' ? 'enabled' : 'disabled'} from the next boot\n`);
      }
      return ExitCode.ok;
    },
  };
}

function planSimple(ctx: CommandContext, group: 'info' | 'inventory' | 'firmware', args: readonly string[]): Plan {
  onlyWith(ctx, [], group);
  if (group === 'firmware') {
    if (args[0] !== 'list') throw usage(`firmware needs list, got ${args[0] === undefined ? 'nothing' : `"${args[0]}"`}`);
    exactly(args, 1, 'firmware list');
    return {
      capability: 'firmware',
      run: async (driver, emit) => {
        const components = await driver.firmware.getFirmwareInventory();
        emit({ address: driver.address.raw, components }, renderFirmware(components));
        return ExitCode.ok;
      },
    };
  }
  exactly(args, 0, group);
  if (group === 'inventory') {
    return {
      capability: 'inventory',
      run: async (driver, emit) => {
        const inventory = await driver.inventory.getInventory();
        emit({ address: driver.address.raw, ...inventory }, renderInventory(inventory));
        return ExitCode.ok;
      },
    };
  }
  return {
    capability: undefined,
    run: async (driver, emit) => {
      const info: BmcInfo | undefined = driver.supports('info') ? await driver.info.getBmcInfo() : undefined;
      const report = {
        address: driver.address.raw, scheme: driver.address.scheme, driver: driver.type, info,
        supported: driver.supported, schemeCapabilities: driver.schemeCapabilities,
      };
      emit(report, renderBmcInfo(report));
      return ExitCode.ok;
    },
  };
}

/** Checks the whole command line (no I/O) and returns what to do. @throws CliError (exit 2). */
function planCommand(ctx: CommandContext, pollMs: number): { readonly address: BmcAddress; readonly format: Format; readonly plan: Plan } {
  if (ctx.args.options.password !== undefined) {
    throw new CliError(ExitCode.usage, '--password is refused: a password on the command line is readable by every local user '
      + '(ps, /proc/PID/cmdline) and stays in shell history; use --password-file FILE (- reads stdin) or the RACKSIDE_BMC_PASSWORD environment variable');
  }
  const [rawAddress, group] = words(ctx, 1);
  if (rawAddress === undefined || group === undefined) throw usage('missing ADDRESS or COMMAND', true);
  let address: BmcAddress;
  try {
    address = parseBmcAddress(rawAddress);
  } catch (err) {
    throw new CliError(ExitCode.usage, err instanceof Error ? err.message : String(err), '', { cause: err });
  }
  const { output } = ctx.args.options;
  if (output !== undefined && output !== 'json' && output !== 'yaml') throw usage(`-o must be json or yaml, got "${output}"`);
  const args = words(ctx, 3);
  let plan: Plan;
  switch (group) {
    case 'power': plan = planPower(ctx, args, pollMs); break;
    case 'boot': plan = planBoot(ctx, args); break;
    case 'vmedia': plan = planVirtualMedia(ctx, args); break;
    case 'bios': plan = planBios(ctx, args); break;
    case 'secureboot': plan = planSecureBoot(ctx, args); break;
    case 'info': case 'inventory': case 'firmware': plan = planSimple(ctx, group, args); break;
    default: throw usage(`unknown bmc command "${group}"`, true);
  }
  return { address, format: output ?? 'text', plan };
}

/** Username from `--username`/`RACKSIDE_BMC_USERNAME`, password from `--password-file` (one trailing newline dropped) or `RACKSIDE_BMC_PASSWORD`. */
async function readCredentials(ctx: CommandContext): Promise<BmcCredentials> {
  const username = ctx.args.options.username ?? ctx.io.env.RACKSIDE_BMC_USERNAME;
  if (username === undefined || username === '') throw usage('missing --username (or RACKSIDE_BMC_USERNAME)');
  const file = ctx.args.options['password-file'];
  if (file === undefined) {
    const password = ctx.io.env.RACKSIDE_BMC_PASSWORD;
    if (password === undefined) throw usage('missing password: give --password-file FILE or set RACKSIDE_BMC_PASSWORD');
    return { username, password };
  }
  let text: string;
  try {
    text = file === '-' ? await ctx.io.readStdin() : await ctx.io.readFile(file);
  } catch (err) {
    throw new CliError(ExitCode.usage, `cannot read --password-file ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { username, password: text.replace(/\r?\n$/, '') };
}

/** Builds the `rackside bmc` command; {@link bmcCommand} is the default one. */
export function createBmcCommand(options: BmcCommandOptions = {}): (ctx: CommandContext) => Promise<number> {
  const pollMs = options.pollMs ?? 1000;
  return async (ctx) => {
    if (ctx.args.positionals[1] === 'probe' && ctx.args.positionals.length <= 3) return probeCommand(ctx);
    const { address, format, plan } = planCommand(ctx, pollMs);
    const credentials = await readCredentials(ctx);
    const registry = options.createRegistry?.() ?? (await ctx.io.createDriverRegistry?.());
    if (registry === undefined) throw new CliError(ExitCode.failure, 'no BMC drivers available in this build of the CLI');
    const driver = registry.create(address, credentials, { disableCertificateVerification: ctx.args.options.insecure === true });
    const emit = (value: unknown, text: string): void => {
      ctx.io.stdout(format === 'text' ? text : renderStructured(format, value));
    };
    try {
      if (plan.capability !== undefined && !driver.supports(plan.capability)) {
        ctx.io.stderr(`error: ${unsupportedMessage(address, plan.capability, driver.supported)}\n`);
        return BmcExitCode.unsupported;
      }
      return await plan.run(driver, emit);
    } catch (err) {
      if (err instanceof CliError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      ctx.io.stderr(`error: ${isBmcError(err, 'RACKSIDE_ERR_BMC_UNSUPPORTED') ? withScheme(message, address) : message}\n`);
      return bmcExitCodeOf(err);
    } finally {
      await driver.close().catch(() => undefined);
    }
  };
}

/** `rackside bmc ADDRESS --username U [--password-file F] [--insecure] [-o json|yaml] COMMAND …` (see {@link BMC_USAGE}). */
export const bmcCommand = createBmcCommand();
