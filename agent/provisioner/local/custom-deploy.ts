/**
 * @module Custom deploy methods: `spec.customDeploy.method` → a registered deploy step, run by
 * `provision` instead of writing `spec.image` (metal3: the method names a deploy step of a
 * custom ramdisk, docs/metal3-mapping.md, "Image and root device hints"; Ironic's `custom-agent` deploy interface runs it at
 * priority 80). A method is an object with a name, a one-line description and a re-entrant
 * `step` with `provision`'s contract (deploy.ts): called once per reconcile until it reports
 * complete, `dirty` while it runs, `errorMessage` when the user must act, a throw when transient;
 * it ends with the node `active` and the host booting what it installed. An unknown method fails
 * with the list of known ones. Nothing registers itself on import: the agent (or a test) builds
 * the registry, {@link builtinCustomDeployMethods} gives the built-in set.
 *
 * Built in: `local_disk_boot` — the disk already holds the OS (factory- or vendor-installed,
 * or written out of band): nothing is written; the host gets a persistent disk boot and is
 * reset onto it. Deprovisioning cleans the disk as for any provisioned host.
 */
import type { ProvisionData, Result } from '../provisioner.js';
import { operationComplete, operationFailed } from '../result.js';
import { bmcFailure } from './bmc-result.js';
import type { DeployContext } from './deploy.js';

/** One custom deploy method. */
export interface CustomDeployMethod {
  /** The `spec.customDeploy.method` value that selects it: 1–64 of `[A-Za-z0-9_.:-]`. */
  readonly name: string;
  /** What it does, in one sentence (events and the unknown-method message). */
  readonly description: string;
  /**
   * One re-entrant step of the deploy (see the module comment). Must set the node `active` when
   * done; a node already active never reaches it (the registry completes it first).
   */
  step(ctx: DeployContext, data: ProvisionData, forceReboot: boolean): Promise<Result>;
}

const METHOD_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** The methods a provisioner can run, by name. */
export class CustomDeployRegistry {
  readonly #methods = new Map<string, CustomDeployMethod>();

  /** Adds `method`; a bad name or a second method of the same name throws (unless `replace`). */
  register(method: CustomDeployMethod, options: { replace?: boolean } = {}): this {
    if (!METHOD_NAME.test(method.name)) throw new Error(`custom deploy method name ${JSON.stringify(method.name)} must be 1-64 characters of [A-Za-z0-9_.:-]`);
    if (this.#methods.has(method.name) && options.replace !== true) throw new Error(`custom deploy method ${method.name} is already registered`);
    this.#methods.set(method.name, method);
    return this;
  }

  /** The method called `name`, if registered. */
  get(name: string): CustomDeployMethod | undefined {
    return this.#methods.get(name);
  }

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.#methods.keys()].sort();
  }
}

/** The built-in `local_disk_boot` method (see the module comment). */
export const localDiskBootMethod: CustomDeployMethod = {
  name: 'local_disk_boot',
  description: 'boot the OS already on the local disk; nothing is written',
  async step(ctx, data) {
    await ctx.update((_n, entry) => {
      entry.boot = 'local-disk'; // iPXE answers "boot the local disk" to a host that still network-boots
    });
    try {
      const driver = ctx.driver();
      await driver.bootDevice.setBootDevice('disk', { persistent: true, mode: data.bootMode === 'legacy' ? 'legacy' : 'uefi' });
      const power = await driver.power.getPowerState();
      await ctx.setPower(power === 'on' || power === 'powering-on' ? 'reset' : 'on');
    } catch (error) {
      return bmcFailure('booting the local disk', error);
    }
    await ctx.update((n) => {
      n.state = 'active';
      delete n.op;
    });
    ctx.publish('ProvisioningComplete', 'custom deploy local_disk_boot: the host boots the OS already on its disk');
    return operationComplete();
  },
};

/** A registry with the built-in methods. */
export function builtinCustomDeployMethods(): CustomDeployRegistry {
  return new CustomDeployRegistry().register(localDiskBootMethod);
}

/** One step of provisioning by `data.customDeploy.method` (see the module comment). */
export async function customDeployStep(registry: CustomDeployRegistry, ctx: DeployContext, data: ProvisionData, forceReboot: boolean): Promise<Result> {
  const { node } = await ctx.node();
  if (node.state === 'active') return operationComplete();
  const name = data.customDeploy?.method ?? '';
  const method = registry.get(name);
  if (method === undefined) {
    const known = registry.names();
    return operationFailed(
      `custom deploy method ${JSON.stringify(name)} is not available: ${known.length === 0 ? 'no custom deploy methods are registered' : `known methods are ${known.join(', ')}`}; provision with spec.image instead`,
    );
  }
  return method.step(ctx, data, forceReboot);
}
