import type { FailOn } from '../cli/fail-on.js';
import type { BimiResult } from '../engine/mail/check-bimi.js';
import { NetintelError } from '../errors.js';
import { BIMI_SCHEMA } from '../output/schemas/bimi-schema.js';
import { mailCheckApi } from './email-tests-api.js';
import { defineOperation } from './operation.js';
import { oneRecordEach } from './outcomes.js';

interface BimiSettings {
  /** The BIMI selector, normalised. */
  selector: string;
  /** The CAs the logo and certificate hosts are trusted by (`--tls-ca` on top of the bundled roots), or undefined for the bundled ones. */
  ca: string[] | undefined;
  failOn: FailOn | undefined;
}

/** `netintel bimi`: the BIMI assertion of domains, its DMARC prerequisites, its logo and mark certificate. */
export const BIMI = defineOperation<BimiSettings, BimiResult>()({
  name: 'bimi',
  command: {
    declare(command, kit) {
      command
        .description('BIMI of domains: the assertion record (l= logo, a= Mark Certificate), its DMARC prerequisites, the SVG logo fetched over HTTPS and checked against SVG Tiny PS basics, the certificate read (not validated)')
        .argument('[domains...]', 'domains; read from stdin (one per line) when piped')
        .addOption(command.createOption('--selector <name>', 'BIMI selector: the record at <selector>._bimi.<domain>').default('default'))
        .addOption(command.createOption('--tls-ca <file>', 'PEM file of CA certificates to trust for the logo and certificate hosts, on top of the bundled roots'))
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
        )
        .addOption(kit.failOnOption());
    },
    refuseRemote(flags) {
      if (flags.tlsCa !== undefined) throw new NetintelError('usage', 'remote mode cannot send --tls-ca: the server trusts its own CAs; run without --server');
    },
    async settings(flags, kit) {
      const { normaliseSelector } = await import('../engine/mail/check-bimi.js');
      const selector = normaliseSelector((flags.selector as string | undefined) ?? 'default');
      const file = flags.tlsCa as string | undefined;
      const ca = file === undefined ? undefined : [...(await import('node:tls')).rootCertificates, ...kit.readCaFile(file, '--tls-ca')];
      return { selector, ca, failOn: flags.failOn as FailOn | undefined };
    },
    run: (run) =>
      run.lookupTargets({
        targets: run.args,
        none: { usage: 'bimi needs a domain: give one or more, or pipe a list in' },
        // DMARC prerequisites that could not be looked up are an `unknown` finding: the run is partial (exit 7).
        failOn: { level: run.settings.failOn, findings: (result) => result.findings },
      }),
  },
  async lookup(ctx, settings) {
    const { checkBimi } = await import('../engine/mail/check-bimi.js');
    const { selector, ca } = settings;
    return oneRecordEach((domain) => checkBimi(ctx, domain, { selector, ...(ca ? { fetch: { ca } } : {}) }));
  },
  record: {
    columns: BIMI_SCHEMA,
    json: { name: 'BimiResult', load: async () => ({ schema: (await import('./record-json-schemas.js')).BIMI_RECORD }) },
    view: async () => (await import('../output/human/bimi-view.js')).BIMI_VIEW,
  },
  api: mailCheckApi('bimi', (settings) => ({ selector: settings.selector })),
});
