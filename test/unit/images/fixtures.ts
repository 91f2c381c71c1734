/**
 * @module Fixtures of the images tests: a tiny kernel modules tree (index files shaped like a
 * real Debian 6.1 depmod output) and a writer that lays it out on disk with dummy .ko files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

// Shapes taken from a real Debian 6.1 tree (depmod output): dependencies are transitive and
// listed so that the last one loads first.
export const fixtureModulesDep = `kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko
kernel/net/core/failover.ko:
kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_pci_legacy_dev.ko:
kernel/drivers/virtio/virtio_pci_modern_dev.ko:
kernel/drivers/scsi/sd_mod.ko: kernel/block/t10-pi.ko kernel/lib/crc-t10dif.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko kernel/crypto/crct10dif_common.ko
kernel/block/t10-pi.ko: kernel/lib/crc-t10dif.ko kernel/crypto/crct10dif_common.ko
kernel/lib/crc-t10dif.ko: kernel/crypto/crct10dif_common.ko
kernel/crypto/crct10dif_common.ko:
kernel/crypto/crct10dif_generic.ko: kernel/crypto/crct10dif_common.ko
kernel/drivers/scsi/scsi_mod.ko: kernel/drivers/scsi/scsi_common.ko
kernel/drivers/scsi/scsi_common.ko:
kernel/drivers/net/ethernet/intel/e1000/e1000.ko:
kernel/drivers/unrelated/big.ko:
`;
export const fixtureModulesAlias = `# Aliases extracted from modules themselves.
alias crypto-crct10dif crct10dif_generic
alias crct10dif crct10dif_generic
alias pci:v00008086d0000100Esv*sd*bc*sc*i* e1000
alias virtio:d00000001v* virtio_net
alias pci:v*d*sv*sd*bc*sc*i* big
`;
export const fixtureModulesSoftdep = `# Soft dependencies extracted from modules themselves.
softdep crc_t10dif pre: crct10dif
softdep cifs gcm
softdep virtio_net post: nonexistent_module
`;
export const fixtureModulesBuiltin = 'kernel/drivers/block/loop.ko\nkernel/fs/ext4/ext4.ko\n';

/** Writes the fixture tree under `<root>/lib/modules/<release>` with one dummy .ko per modules.dep line; returns that directory. */
export function writeFixtureModulesTree(root: string, release = '6.1.0-99-test'): string {
  const dir = join(root, 'lib/modules', release);
  for (const line of fixtureModulesDep.split('\n').filter(Boolean)) {
    const path = line.slice(0, line.indexOf(':'));
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), `fake module ${path}\n`);
  }
  writeFileSync(join(dir, 'modules.dep'), fixtureModulesDep);
  writeFileSync(join(dir, 'modules.alias'), fixtureModulesAlias);
  writeFileSync(join(dir, 'modules.softdep'), fixtureModulesSoftdep);
  writeFileSync(join(dir, 'modules.builtin'), fixtureModulesBuiltin);
  return dir;
}
