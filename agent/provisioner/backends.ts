/**
 * @module The one place `provisioner:` is read: {@link openBackend} opens the configured
 * provisioner as a {@link ProvisionerBackend}, and {@link unusedConfigSections} names the config
 * sections it would not use. Such a section is not refused: the agent logs a warning and
 * records a `ConfigSectionUnused` event at start (agent/main.ts), because a demo or test config
 * may legitimately carry them (`rackside agent --demo` with a real config file runs the demo
 * provisioner over it), but it must never look accepted while nothing listens.
 */
import type { Config, ProvisionerKind } from '../config.js';
import type { BackendDeps, ProvisionerBackend } from './backend.js';
import { DemoFactory } from './demo.js';
import { seedDemoHosts } from './demo-hosts.js';
import { Fixture } from './fixture.js';
import { openLocalBackend } from './local/backend.js';

/** A backend that is only a factory (the in-memory provisioners). */
function factoryOnly(factory: ProvisionerBackend['factory']): ProvisionerBackend {
  return { factory, start: () => Promise.resolve(), stop: () => Promise.resolve() };
}

/** Opens the provisioner `deps.config.provisioner` names. */
export async function openBackend(deps: BackendDeps): Promise<ProvisionerBackend> {
  const { config } = deps;
  switch (config.provisioner) {
    case 'fixture':
      return factoryOnly(new Fixture({ delayScale: config.reconcile.timeScale }));
    case 'demo':
      // The demo rack's sample hosts are applied once into an empty store.
      return { ...factoryOnly(new DemoFactory({ delayScale: config.reconcile.timeScale })), start: () => seedDemoHosts(deps.store) };
    case 'local':
      return openLocalBackend(deps);
  }
}

/** Sections only the local provisioner reads: boot services, images, BMC sessions, boot pacing. */
const LOCAL_ONLY_SECTIONS = ['provisioning', 'dhcp', 'discovery', 'tftp', 'http', 'images', 'bmc', 'governor'] as const;

/** Sections of the config file that `provisioner` does not use. */
const UNUSED_SECTIONS: Readonly<Record<ProvisionerKind, readonly string[]>> = {
  local: [],
  fixture: LOCAL_ONLY_SECTIONS,
  demo: LOCAL_ONLY_SECTIONS,
};

/** A config section the chosen provisioner ignores, and why. */
export interface UnusedSection {
  section: string;
  message: string;
}

/**
 * The sections present in the config file (`config.sections`) that the configured provisioner
 * does not use, each with the sentence the agent logs. Pure.
 */
export function unusedConfigSections(config: Pick<Config, 'provisioner' | 'sections'>): UnusedSection[] {
  const unused = new Set(UNUSED_SECTIONS[config.provisioner]);
  return (config.sections ?? []).filter((section) => unused.has(section)).map((section) => ({
    section,
    message: `config section "${section}" is ignored: the ${config.provisioner} provisioner runs no boot services, BMC sessions or image cache (only provisioner: local does)`,
  }));
}
