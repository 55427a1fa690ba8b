import { createReadStream } from 'node:fs';
import { Option, type Command } from 'commander';
import type { CommandRuntime } from '../cli/runtime.js';
import { addFailOnOption, type FailOn } from '../cli/fail-on.js';
import { NetintelError } from '../errors.js';
import { DKIM_MESSAGE_SCHEMA, DKIM_SCHEMA } from '../output/schemas/dkim-schema.js';
import type { DkimResult } from '../engine/mail/check-dkim.js';
import type { DkimMessageResult } from '../engine/mail/dkim-message.js';
import { MAX_MESSAGE_BYTES } from '../engine/mail/dkim-message-reader.js';
import { runMailCommand } from './mail-run.js';

interface DkimFlags {
  selector?: string;
  message?: string;
  failOn?: FailOn;
}

/** A saved message larger than this is not a message a mail server would have accepted. */

export function registerDkimCommand(program: Command, runtime: CommandRuntime): void {
  const command = program
    .command('dkim')
    .description('DKIM keys of domains at given or common selectors (RFC 6376): key type and strength from the key itself, revoked and testing keys, CNAME delegation; with --message, the signatures of a saved message verified')
    .argument('[domains...]', 'domains; read from stdin (one per line) when piped')
    .addOption(new Option('--selector <list>', 'selectors to check, comma-separated (default: probe common selectors)'))
    .addOption(new Option('--message <file>', 'verify the DKIM signatures of a saved message (RFC 5322 file, "-" for stdin) instead of checking domains'))
    .addHelpText(
      'after',
      [
        '',
        'Selectors cannot be listed from DNS: when no common selector answers, the domain may still',
        'sign with another one. Read s= in the DKIM-Signature header of a message it sent, then give',
        'it with --selector. A failed lookup is temperror, never "no key".',
        'Examples:',
        '  netintel dkim example.com',
        '  netintel dkim example.com --selector google,selector1',
        '  netintel dkim --message saved.eml',
        '  netintel dkim example.com --fail-on warning   # exit 10 on a weak, revoked or testing key',
        '  netintel dkim -f ndjson < domains.txt',
      ].join('\n'),
    );
  addFailOnOption(command).action(async (domains: string[], flags: DkimFlags, self: Command) => {
    const options = runtime.options(self);
    const ctx = runtime.context(options);
    if (flags.message !== undefined) {
      if (options.remote) throw new NetintelError('usage', 'remote mode cannot send a message to the server: run netintel dkim --message without --server');
      if (domains.length > 0 || flags.selector !== undefined) {
        throw new NetintelError('usage', '--message verifies a saved message on its own: give no domain or --selector with it');
      }
      const { checkDkimMessage } = await import('../engine/mail/dkim-message.js');
      const source = flags.message;
      await runMailCommand<DkimMessageResult>({
        runtime,
        options,
        schema: DKIM_MESSAGE_SCHEMA,
        targets: [source],
        usage: '--message needs a file',
        check: async (file) => {
          const message = await readMessage(runtime, file);
          return checkDkimMessage(ctx, message, file === '-' ? 'stdin' : file);
        },
        findingsOf: (result) => result.findings,
        failOn: flags.failOn,
      });
      return;
    }
    const selectors = flags.selector === undefined ? undefined : selectorList(flags.selector);
    // Remote mode (--server): GET /api/email-tests?type=dkim, whose report holds the same DKIM record.
    const remote = options.remote ? (await import('../cli/remote-mode.js')).openRemoteEngine(options, runtime.io, runtime.progress) : null;
    const { checkDkim } = await import('../engine/mail/check-dkim.js');
    await runMailCommand<DkimResult>({
      runtime,
      options,
      schema: DKIM_SCHEMA,
      targets: domains,
      usage: 'dkim needs a domain: give one or more, or pipe a list in (or --message FILE to verify a saved message)',
      check: remote
        ? (domain) => remote.mailCheck<DkimResult>('dkim', domain, selectors ? { selector: selectors.join(',') } : {})
        : (domain) => checkDkim(ctx, domain, selectors ? { selectors } : {}),
      ...(remote ? { concurrency: remote.concurrency } : {}),
      findingsOf: (result) => result.findings,
      failOn: flags.failOn,
    });
  });
}

function selectorList(text: string): string[] {
  const list = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (list.length === 0) throw new NetintelError('usage', '--selector needs at least one selector, e.g. --selector google,selector1');
  return list;
}

/**
 * The message, read as a stream up to one byte past the verifier's limit, so
 * that /dev/zero or an endless pipe costs no more than the limit; the
 * verifier refuses what is over it (dkim-message-reader.ts).
 */
async function readMessage(runtime: CommandRuntime, file: string): Promise<Buffer> {
  try {
    return await readUpTo(file === '-' ? runtime.io.stdin : createReadStream(file), MAX_MESSAGE_BYTES + 1);
  } catch (error) {
    throw new NetintelError('invalid_input', `cannot read --message ${JSON.stringify(file)}: ${(error as Error).message} (give the path of a saved .eml message)`, { cause: error });
  }
}

async function readUpTo(stream: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    chunks.push(buffer.subarray(0, limit - size));
    size = Math.min(limit, size + buffer.length);
    if (size >= limit) break;
  }
  return Buffer.concat(chunks, size);
}
