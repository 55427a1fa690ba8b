import type { FastifyRequest } from 'fastify';
import type { FailOn } from '../cli/fail-on.js';
import type { HeadersReport } from '../engine/mail/headers/analyze-headers.js';
import { leavesPartUnchecked } from '../engine/findings.js';
import { NetintelError } from '../errors.js';
import { fileErrorReason } from '../file-error.js';
import { recordFromSchema } from './declare-record.js';
import { HEADERS_HOP_ROW, HEADERS_RECORD, hopRows } from './headers-record.js';
import { defineOperation, type RecordDeclaration } from './operation.js';
import { oneRecordEach } from './outcomes.js';

interface HeadersSettings {
  /** `--blacklist`: each public hop address checked against the DNS blocklists. */
  blacklist: boolean;
  /** Reads the message a target names ("-": stdin); absent: the target is the message itself (the library). */
  read?: (file: string) => Promise<Buffer>;
  failOn?: FailOn | undefined;
}

/** The body of POST /api/headers. */
interface HeadersBody {
  message: string;
  blacklist?: boolean;
}

/** The CSV rows of `netintel headers`: one per hop. */
const HOP_RECORD: RecordDeclaration = recordFromSchema({
  name: 'HeadersHopRow',
  schema: HEADERS_HOP_ROW,
  kind: 'headers-hop',
  identity: ['source', 'hop'],
});

/** `netintel headers`: a message's journey hop by hop, from its header block. */
export const HEADERS = defineOperation<HeadersSettings, HeadersReport>()({
  name: 'headers',
  command: {
    declare(command, kit) {
      command
        .description('a message\'s journey read from its header block: every Received hop oldest first with hosts, address, protocol, TLS and delay, the total transit time, each public hop address described, and SPF, DKIM, DMARC and ARC recomputed beside its Authentication-Results')
        .argument('[file]', 'a saved message (.eml, one mbox entry) or its header block alone; "-" or none: stdin')
        .addOption(command.createOption('--blacklist', 'check each public hop address against the DNS blocklists'))
        .addHelpText(
          'after',
          [
            '',
            'Hops are read from the Received fields bottom up (RFC 5321 §4.4). A field that cannot be read',
            'is shown as written, never dropped. A hop stamped before the hop before it is clock skew, not a',
            'negative delay. Authentication is recomputed, never taken from the message; a DNS failure is',
            'temperror and the run exits 7. CSV writes one row per hop.',
            'Examples:',
            '  netintel headers saved.eml',
            '  pbpaste | netintel headers',
            '  netintel headers saved.eml --blacklist -f json',
            '  netintel headers saved.eml -f csv > hops.csv',
            '  netintel headers saved.eml --fail-on warning   # exit 10 on a large delay or an unread hop',
          ].join('\n'),
        )
        .addOption(kit.failOnOption());
    },
    settings(flags, kit) {
      return {
        blacklist: flags.blacklist === true,
        read: (file) => readMessage(kit.readUpTo, file),
        failOn: flags.failOn as FailOn | undefined,
      };
    },
    async run(run) {
      if (run.args.length > 1) throw new NetintelError('usage', 'headers reads one message: give one file, or pipe it in');
      const file = run.args[0] ?? '-';
      if (file === '-' && !run.stdinBringsList()) throw new NetintelError('usage', 'headers needs a message: give a saved .eml file, or pipe the message or its header block in');
      const failOn = { level: run.settings.failOn, findings: (report: HeadersReport) => report.findings };
      if (run.options.format !== 'csv') {
        // A verdict left open for want of DNS (temperror, a blocklist that did not answer) is an `unknown` finding: the run is partial (exit 7).
        return run.lookupTargets({ targets: [file], none: { usage: 'headers needs a message' }, failOn, single: true });
      }
      // CSV: one row per hop, the findings still deciding --fail-on.
      const lookup = await run.lookup();
      const outcomes = await lookup(file);
      const findings = outcomes.flatMap((outcome) => (outcome.ok ? outcome.value.findings : []));
      const rows = outcomes.map((outcome) => (outcome.ok ? hopRows(outcome.value).map((row) => ({ ok: true as const, query: file, value: row })) : [outcome]));
      const partial = outcomes.some((outcome) => outcome.ok && leavesPartUnchecked(outcome.value.findings));
      const code = await run.emit(rows, { single: false, bulk: false, record: HOP_RECORD, coverage: () => (partial ? 'partial' : 'complete') });
      await lookup.close?.();
      return run.withFindings(code, run.settings.failOn, findings);
    },
  },
  async lookup(ctx, settings) {
    const { analyzeHeaders } = await import('../engine/mail/headers/analyze-headers.js');
    const read = settings.read;
    return oneRecordEach(async (target) =>
      read === undefined
        ? analyzeHeaders(ctx, Buffer.from(target, 'utf8'), 'message', { blacklist: settings.blacklist })
        : analyzeHeaders(ctx, await read(target), target === '-' ? 'stdin' : target, { blacklist: settings.blacklist }),
    );
  },
  record: recordFromSchema({
    name: 'HeadersReport',
    schema: HEADERS_RECORD,
    kind: 'headers',
    identity: ['source'],
    tableColumns: ['source', 'message.subject', 'hops', 'total_transit_seconds', 'findings'],
    mainValue: ['total_transit_seconds'],
    // Public hops are described by the IP engine's data.
    credit: 'Hop locations: DB-IP (https://db-ip.com), CC BY 4.0; ASN data: RouteViews, NRO and DB-IP',
    view: async () => (await import('../output/human/headers-view.js')).HEADERS_VIEW,
  }),
  api: {
    method: 'POST',
    path: '/api/headers',
    feature: null,
    // The message goes to the server in the request's body; the record comes back as the local one would be.
    async call(remote, target, settings) {
      if (settings.read === undefined) throw new NetintelError('usage', 'headers needs the message to send');
      const message = (await settings.read(target)).toString('utf8');
      const body: HeadersBody = { message, ...(settings.blacklist ? { blacklist: true } : {}) };
      const answer = await remote.post('/api/headers', body, remote.recordAnswer('HeadersReport', 'headers report'));
      return [{ ok: true, query: target, value: { ...(answer.body as HeadersReport), source: target === '-' ? 'stdin' : target } }];
    },
    route: () => ({
      network: true,
      operationId: 'postHeaders',
      summary: 'A message\'s journey hop by hop, read from its header block',
      description:
        'Reads `message` (a saved message or its header block alone, as text; the body counts against the server\'s request size limit, 64 KiB by default): ' +
        'every Received field as a hop, oldest first, with its hosts, address, protocol, TLS, delay and clock skew, the total transit time, ' +
        'and each public hop address described (country, AS, organisation, hosting/VPN/Tor flags). `blacklist` adds the DNSBL verdict of each public hop address.',
      body: {
        type: 'object',
        required: ['message'],
        additionalProperties: false,
        properties: {
          message: { type: 'string', minLength: 1, description: 'The message, or its header block, as text (CRLF or LF line ends).' },
          blacklist: { type: 'boolean', description: 'Check each public hop address against the DNS blocklists (default false).' },
        },
      },
      responseDescription: 'The record of `netintel headers -f json`, `source` "request".',
      examples: [{ body: { message: 'Received: from mail.example.com (mail.example.com [192.0.2.10]) by mx.example.org with ESMTPS id 4Q1abc; Tue, 1 Jul 2025 10:00:02 +0000\r\nDate: Tue, 1 Jul 2025 10:00:00 +0000\r\nSubject: hello\r\n' } }],
      handler: async (request: FastifyRequest, _reply, api) => {
        const body = request.body as HeadersBody;
        const { analyzeHeaders } = await import('../engine/mail/headers/analyze-headers.js');
        return analyzeHeaders(api.ctx, Buffer.from(body.message, 'utf8'), 'request', { blacklist: body.blacklist === true });
      },
    }),
  },
});

/** The message, read as a stream up to one byte past the reader's limit (dkim-message-reader.ts refuses what is over it). */
async function readMessage(readUpTo: (file: string, limit: number) => Promise<Buffer>, file: string): Promise<Buffer> {
  const { MAX_MESSAGE_BYTES } = await import('../engine/mail/dkim-message-reader.js');
  try {
    return await readUpTo(file, MAX_MESSAGE_BYTES + 1);
  } catch (error) {
    throw new NetintelError('invalid_input', `cannot read ${JSON.stringify(file)}: ${fileErrorReason(error)} (give the path of a saved .eml message)`, { cause: error });
  }
}
