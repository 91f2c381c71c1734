import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeRequestPath } from '../../../../bootsvc/tftp/path.js';

const accepted: Record<string, { name: string; path: string }> = {
  'plain name': { name: 'ipxe.efi', path: 'ipxe.efi' },
  'nested path': { name: 'grub/x86_64-efi/grub.cfg', path: 'grub/x86_64-efi/grub.cfg' },
  'absolute name is relative to the root (in.tftpd -s)': { name: '/grub/grub.cfg', path: 'grub/grub.cfg' },
  'double slash (shim joins paths with //)': { name: '//grubx64.efi', path: 'grubx64.efi' },
  'repeated and trailing slashes collapse': { name: 'a//b///c/', path: 'a/b/c' },
  'dot segments are dropped': { name: './a/./b', path: 'a/b' },
  'backslashes are separators (Windows-style configs)': { name: 'boot\\x64\\wdsnbp.com', path: 'boot/x64/wdsnbp.com' },
  'leading backslash is absolute-in-root': { name: '\\pxelinux.0', path: 'pxelinux.0' },
  'names that merely contain dots are fine': { name: 'a..b/...', path: 'a..b/...' },
  'spaces and punctuation are printable': { name: 'my file (1).cfg', path: 'my file (1).cfg' },
};

for (const [name, c] of Object.entries(accepted)) {
  test(`accepted: ${name}`, () => {
    const r = normalizeRequestPath(c.name);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.equal(r.path, c.path);
    assert.deepEqual(r.segments, c.path.split('/'));
  });
}

const refused: Record<string, { name: string; reason: RegExp }> = {
  'parent directory': { name: '../etc/passwd', reason: /parent directory/ },
  'parent directory in the middle': { name: 'grub/../../etc/shadow', reason: /parent directory/ },
  'parent directory even if it would stay inside': { name: 'a/../b', reason: /parent directory/ },
  'absolute escape': { name: '/../../etc/passwd', reason: /parent directory/ },
  'backslash parent directory': { name: '..\\..\\etc\\passwd', reason: /parent directory/ },
  'mixed separators': { name: 'a\\../..\\x', reason: /parent directory/ },
  'trailing ..': { name: 'a/..', reason: /parent directory/ },
  'NUL byte': { name: 'ipxe.efi\0.txt', reason: /NUL byte at index 8/ },
  'control character': { name: 'a\nb', reason: /character 0x0a at index 1 is not printable ASCII/ },
  'DEL': { name: 'a\x7f', reason: /0x7f/ },
  'byte above 0x7f (latin1-decoded)': { name: 'caf\xe9', reason: /0xe9 at index 3/ },
  // Unicode look-alikes arrive as UTF-8 bytes (decoded as latin1 by the packet codec): refused, never normalized to `..` or `/`.
  'fullwidth full stops U+FF0E as UTF-8': { name: '\xef\xbc\x8e\xef\xbc\x8e/etc/passwd', reason: /0xef at index 0/ },
  'division slash U+2215 as UTF-8': { name: '..\xe2\x88\x95etc\xe2\x88\x95passwd', reason: /0xe2 at index 2/ },
  'overlong UTF-8 dot (0xc0 0xae)': { name: '\xc0\xae\xc0\xae/etc/passwd', reason: /0xc0 at index 0/ },
  'empty name': { name: '', reason: /empty file name/ },
  'the root itself': { name: '/', reason: /names the root directory/ },
  'only dots and slashes': { name: './/.', reason: /names the root directory/ },
  'too long': { name: 'a'.repeat(1025), reason: /longer than 1024/ },
  'too deep': { name: 'a/'.repeat(33), reason: /more than 32 path segments/ },
};

for (const [name, c] of Object.entries(refused)) {
  test(`refused: ${name}`, () => {
    const r = normalizeRequestPath(c.name);
    assert.ok(!r.ok);
    assert.match(r.reason, c.reason);
  });
}
