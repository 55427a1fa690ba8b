import { readCaFile } from '../cli/ca-file.js';
import { rootCertificates } from 'node:tls';
import { Option, type Command } from 'commander';
import type { CommandRuntime } from '../cli/runtime.js';
import { addFailOnOption, type FailOn } from '../cli/fail-on.js';
import { NetintelError } from '../errors.js';
import { BIMI_SCHEMA } from '../output/schemas/bimi-schema.js';
import type { BimiResult } from '../engine/mail/check-bimi.js';
import { runMailCommand } from './mail-run.js';

interface BimiFlags {
  selector?: string;
  tlsCa?: string;
  failOn?: FailOn;
}

export function registerBimiCommand(program: Command, runtime: CommandRuntime): void {
  const command = program
    .command('bimi')
    .description('BIMI of domains: the assertion record (l= logo, a= Mark Certificate), its DMARC prerequisites, the SVG logo fetched over HTTPS and checked against SVG Tiny PS basics, the certificate read (not validated)')
    .argument('[domains...]', 'domains; read from stdin (one per line) when piped')
    .addOption(new Option('--selector <name>', 'BIMI selector: the record at <selector>._bimi.<domain>').default('default'))
    .addOption(new Option('--tls-ca <file>', 'PEM file of CA certificates to trust for the logo and certificate hosts, on top of the bundled roots'))
    .addHelpText(
      'after',
      [
        '',
        'A failed lookup of the _bimi record is an error (exit 4/5), never "no record"; a logo or',
        'certificate that cannot be fetched is an error finding. The Mark Certificate is read, not',
        'validated: no chain, signature or revocation check.',
        'Examples:',
        '  netintel bimi example.com',
        '  netintel bimi example.com --selector brand2 -f json',
        '  netintel bimi example.com --fail-on error     # exit 10 when an error finding is reported',
        '  netintel bimi -f ndjson < domains.txt',
      ].join('\n'),
    );
  addFailOnOption(command).action(async (domains: string[], flags: BimiFlags, self: Command) => {
    const options = runtime.options(self);
    const { checkBimi, normaliseSelector } = await import('../engine/mail/check-bimi.js');
    const selector = normaliseSelector(flags.selector ?? 'default');
    if (options.remote && flags.tlsCa !== undefined) throw new NetintelError('usage', 'remote mode cannot send --tls-ca: the server trusts its own CAs; run without --server');
    const ca = flags.tlsCa === undefined ? undefined : [...rootCertificates, ...readCaFile(flags.tlsCa, '--tls-ca')];
    const ctx = runtime.context(options);
    // Remote mode (--server): GET /api/email-tests?type=bimi, whose report holds the same BIMI record.
    const remote = options.remote ? (await import('../cli/remote-mode.js')).openRemoteEngine(options, runtime.io, runtime.progress) : null;
    await runMailCommand<BimiResult>({
      runtime,
      options,
      schema: BIMI_SCHEMA,
      targets: domains,
      usage: 'bimi needs a domain: give one or more, or pipe a list in',
      check: remote
        ? (domain) => remote.mailCheck<BimiResult>('bimi', domain, { selector })
        : (domain) => checkBimi(ctx, domain, { selector, ...(ca ? { fetch: { ca } } : {}) }),
      ...(remote ? { concurrency: remote.concurrency } : {}),
      findingsOf: (result) => result.findings,
      failOn: flags.failOn,
    });
  });
}

