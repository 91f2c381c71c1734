/**
 * @module Child process for test/integration/systemd.test.ts: does, in one process, the work for
 * which the agent runs other programs or threads — a config drive as ISO (xorriso) and as VFAT
 * (mkfs.vfat, mmd, mcopy), a qcow2 image converted to raw (qemu-img, reniced) and hashed (the
 * hashing worker) — so that the test can trace all of it and hold each call against the unit's
 * filter. Usage: `node agent-tools-child.js DIR` with DIR/image.qcow2 present; prints `done`.
 */
import { join } from 'node:path';
import { buildConfigDrive } from '../../images/config-drive.js';
import { hashFile } from '../../images/hash-file.js';
import { convertToRaw } from '../../images/image-convert.js';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: agent-tools-child.js DIR');
const content = { uuid: '6b1c3f52-8a4e-4d0b-9a57-0d1f5c2e9a11', name: 'tools-host', publicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBv0 test'], userData: '#cloud-config\n' };
await buildConfigDrive(content, { outputPath: join(dir, 'config-drive.iso'), format: 'iso' });
await buildConfigDrive(content, { outputPath: join(dir, 'config-drive.img'), format: 'vfat' });
await convertToRaw(join(dir, 'image.qcow2'), 'qcow2', join(dir, 'image.raw'));
const digests = await hashFile(join(dir, 'image.raw'), ['sha256']);
if (digests.sha256 === undefined) throw new Error('no sha256');
console.log('done');
