/**
 * @module `rackside export boot-ca [--format pem|der|edk2] [--output FILE]`: the boot CA firmware
 * enrols to trust boot HTTPS (docs/https-boot.md), from `GET /api/v1/boot/ca` (PEM), written as
 * PEM, DER or the EFI_SIGNATURE_LIST OVMF takes through fw_cfg `etc/edk2/https/cacerts`. PEM
 * without `--output` goes to stdout; the binary formats need `--output`.
 */
import { bootCaBytes, BOOT_CA_FORMATS, type BootCaFormat } from '../web/boot-ca-route.js';
import type { CommandContext } from './commands.js';
import { CliError, ExitCode } from './io.js';

const USAGE = 'usage: rackside export boot-ca [--format pem|der|edk2] [--output FILE]';

/** Runs the command; exit 0 once the CA is written. */
export async function exportBootCaCommand(ctx: CommandContext): Promise<number> {
  if (ctx.args.positionals.length > 2) throw new CliError(ExitCode.usage, USAGE);
  const format = ctx.args.options.format ?? 'pem';
  if (!(BOOT_CA_FORMATS as readonly string[]).includes(format)) throw new CliError(ExitCode.usage, `--format must be one of ${BOOT_CA_FORMATS.join(', ')}; ${USAGE}`);
  const output = ctx.args.options.output;
  const pem = await ctx.client().requestText('/api/v1/boot/ca?format=pem');
  if (output === undefined) {
    if (format !== 'pem') throw new CliError(ExitCode.usage, `--format ${format} is binary: give --output FILE`);
    ctx.io.stdout(pem);
    return ExitCode.ok;
  }
  const write = ctx.io.writeBytes;
  if (write === undefined) throw new CliError(ExitCode.usage, 'export writes files, which is not done over SSH: GET /api/v1/boot/ca?format=… instead');
  const bytes = bootCaBytes(pem, format as BootCaFormat);
  await write(output, bytes);
  ctx.io.stdout(`wrote ${output} (${format}, ${bytes.length} bytes)\n`);
  return ExitCode.ok;
}
