import type { FailOn } from '../cli/fail-on.js';
import type { DkimResult } from '../engine/mail/check-dkim.js';
import type { DkimMessageResult } from '../engine/mail/dkim-message.js';
import { NetintelError } from '../errors.js';
import { fileErrorReason } from '../file-error.js';
import { DKIM_MESSAGE_SCHEMA, DKIM_SCHEMA } from '../output/schemas/dkim-schema.js';
import { mailCheckApi } from './email-tests-api.js';
import { defineOperation, type RecordDeclaration } from './operation.js';
import { oneRecordEach } from './outcomes.js';

interface DkimSettings {
  /** `--selector` as given (checked when the run knows what it verifies), or undefined for the common selectors. */
  selector: string | undefined;
  /** `--message FILE`: the saved message whose signatures are verified, read when the run starts ("-": stdin). */
  message: { file: string; read: () => Promise<Buffer> } | undefined;
  failOn: FailOn | undefined;
}

/** The records of `dkim --message`: one verification of a saved message's signatures. */
const MESSAGE_RECORD: RecordDeclaration = {
  columns: DKIM_MESSAGE_SCHEMA,
  view: async () => (await import('../output/human/dkim-view.js')).DKIM_MESSAGE_VIEW,
};

/** `netintel dkim`: the DKIM keys of domains at given or common selectors, or the signatures of a saved message. */
export const DKIM = defineOperation<DkimSettings, DkimResult | DkimMessageResult>()({
  name: 'dkim',
  command: {
    declare(command, kit) {
      command
        .description('DKIM keys of domains at given or common selectors (RFC 6376): key type and strength from the key itself, revoked and testing keys, CNAME delegation; with --message, the signatures of a saved message verified')
        .argument('[domains...]', 'domains; read from stdin (one per line) when piped')
        .addOption(command.createOption('--selector <list>', 'selectors to check, comma-separated (default: probe common selectors)'))
        .addOption(command.createOption('--message <file>', 'verify the DKIM signatures of a saved message (RFC 5322 file, "-" for stdin) instead of checking domains'))
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
        )
        .addOption(kit.failOnOption());
    },
    refuseRemote(flags) {
      if (flags.message !== undefined) throw new NetintelError('usage', 'remote mode cannot send a message to the server: run netintel dkim --message without --server');
    },
    settings(flags, kit) {
      const file = flags.message as string | undefined;
      return {
        selector: flags.selector as string | undefined,
        message: file === undefined ? undefined : { file, read: () => readMessage(kit.readUpTo, file) },
        failOn: flags.failOn as FailOn | undefined,
      };
    },
    run(run) {
      const { settings } = run;
      const failOn = { level: settings.failOn, findings: (result: DkimResult | DkimMessageResult) => result.findings };
      if (settings.message !== undefined) {
        if (run.args.length > 0 || settings.selector !== undefined) {
          throw new NetintelError('usage', '--message verifies a saved message on its own: give no domain or --selector with it');
        }
        // A signature whose key lookup failed was not checked: the run is partial (exit 7), or failed with the lookups' code when none could be checked.
        const coverage = (result: DkimResult | DkimMessageResult) => (result.kind === 'dkim-message' ? result : { checked: 'all' as const, failure: null });
        return run.lookupTargets({ targets: [settings.message.file], none: { usage: '--message needs a file' }, failOn, record: MESSAGE_RECORD, coverage });
      }
      if (settings.selector !== undefined) selectorList(settings.selector);
      return run.lookupTargets({
        targets: run.args,
        none: { usage: 'dkim needs a domain: give one or more, or pipe a list in (or --message FILE to verify a saved message)' },
        failOn,
      });
    },
  },
  async lookup(ctx, settings) {
    const { message } = settings;
    if (message !== undefined) {
      const { checkDkimMessage } = await import('../engine/mail/dkim-message.js');
      return oneRecordEach(async (file) => checkDkimMessage(ctx, await message.read(), file === '-' ? 'stdin' : file));
    }
    const { checkDkim } = await import('../engine/mail/check-dkim.js');
    const selectors = settings.selector === undefined ? undefined : selectorList(settings.selector);
    return oneRecordEach((domain) => checkDkim(ctx, domain, selectors ? { selectors } : {}));
  },
  record: {
    columns: DKIM_SCHEMA,
    json: { name: 'DkimResult', load: async () => ({ schema: (await import('./record-json-schemas.js')).DKIM_RECORD }) },
    view: async () => (await import('../output/human/dkim-view.js')).DKIM_VIEW,
  },
  api: mailCheckApi('dkim', (settings): Record<string, string> => (settings.selector === undefined ? {} : { selector: selectorList(settings.selector).join(',') })),
});

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
async function readMessage(readUpTo: (file: string, limit: number) => Promise<Buffer>, file: string): Promise<Buffer> {
  const { MAX_MESSAGE_BYTES } = await import('../engine/mail/dkim-message-reader.js');
  try {
    return await readUpTo(file, MAX_MESSAGE_BYTES + 1);
  } catch (error) {
    throw new NetintelError('invalid_input', `cannot read --message ${JSON.stringify(file)}: ${fileErrorReason(error)} (give the path of a saved .eml message)`, { cause: error });
  }
}
