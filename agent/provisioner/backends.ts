/**
 * @module The one place `provisioner:` is read: {@link openBackend} opens the configured
 * provisioner as a {@link ProvisionerBackend}, and `unusedConfigSections` (unused-sections.ts,
 * also read by `rackside doctor`) names the config sections it would not use. Such a section is not refused: the agent logs a warning and
 * records a `ConfigSectionUnused` event at start (agent/main.ts), because a demo or test config
 * may legitimately carry them (`rackside agent --demo` with a real config file runs the demo
 * provisioner over it), but it must never look accepted while nothing listens.
 */
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

export { unusedConfigSections, type UnusedSection } from './unused-sections.js';
