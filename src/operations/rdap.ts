import type { FastifyRequest } from 'fastify';
import type { FailOn } from '../cli/fail-on.js';
import type { RdapContactFields, RdapRegistrar, RdapResult, RdapSource } from '../engine/rdap/rdap-record.js';
import { NetintelError } from '../errors.js';
import { recordFromSchema } from './declare-record.js';
import { arrayOf, bool, described, eg, int, nullable, oneOfStrings, record, ref, str, strings } from './json-schema.js';
import { defineOperation } from './operation.js';
import { oneRecordEach } from './outcomes.js';

interface RdapSettings {
  /** A domain expiring within this many days is a warning finding. */
  expiryDays: number;
  /** The CAs the RDAP servers are trusted by (`--tls-ca` on top of the bundled roots), or undefined for the bundled ones. */
  ca: string[] | undefined;
  failOn: FailOn | undefined;
}

const DEFAULT_EXPIRY_DAYS = 30;
const MAX_EXPIRY_DAYS = 3650;

const date = (example: string) => nullable(eg(str, example));

/** The RDAP record of an address, network, AS number or domain (docs/commands/rdap.md): its JSON Schema is where its columns come from. */
const RDAP_RECORD = record<RdapResult>(
  {
    kind: { const: 'rdap' },
    target: described(eg(str, '192.0.2.0/24'), 'The target asked, normalised: an address, a CIDR block, AS64496, a domain in ASCII.'),
    object: described(oneOfStrings(['ip network', 'autnum', 'domain']), 'The RDAP object class asked for (RFC 9082 §3.1).'),
    handle: described(nullable(str), "The registry's handle of the object."),
    name: described(nullable(str), 'The name of a network or AS (RFC 9083 §5.4, §5.5).'),
    start_address: described(nullable(eg(str, '192.0.2.0')), 'Networks: the first address.'),
    end_address: described(nullable(eg(str, '192.0.2.255')), 'Networks: the last address.'),
    cidrs: described(strings, 'Networks: the CIDR blocks, when the registry gives them.'),
    ip_version: described({ type: ['integer', 'null'], enum: [4, 6, null] }, 'Networks: the address family.'),
    network_type: described(nullable(str), "Networks: the registry's type of the allocation or assignment."),
    start_autnum: described({ type: ['integer', 'null'] }, 'AS numbers: the first of the block.'),
    end_autnum: described({ type: ['integer', 'null'] }, 'AS numbers: the last of the block.'),
    registrar: described(
      record<RdapRegistrar>({ name: nullable(str), iana_id: described(nullable(str), 'The IANA Registrar ID.') }),
      'Domains: the registrar (the entity with the registrar role).',
    ),
    status: described(strings, 'Domains: the status values (RFC 8056), such as client transfer prohibited.'),
    nameservers: described(strings, 'Domains: the name servers, lower case.'),
    delegation_signed: described({ type: ['boolean', 'null'] }, 'Domains: whether the delegation is signed (DS records at the parent; secureDNS.delegationSigned); null when not said.'),
    expires: described(date('2030-01-01T00:00:00Z'), 'Domains: the expiration date.'),
    days_until_expiry: described({ type: ['integer', 'null'] }, 'Domains: whole days from now until the expiry; negative once expired.'),
    country: described(nullable(str), 'The country the registry gives.'),
    organisation: described(nullable(str), "The holder: the registrant's organisation or name."),
    abuse: described(
      record<RdapContactFields>({ name: nullable(str), email: nullable(eg(str, 'abuse@example.net')), phone: nullable(str) }),
      'The contact with the abuse role (RFC 9083 §10.2.4), searched through nested entities: whom to report abuse to.',
    ),
    registered: described(date('2010-01-01T00:00:00Z'), 'The registration date.'),
    last_changed: described(date('2020-06-07T08:09:10Z'), 'The date of the last change.'),
    redacted: described(strings, 'Fields the registries withheld (RFC 9537, or values such as REDACTED FOR PRIVACY): withheld, not missing.'),
    sources: described(
      arrayOf(record<RdapSource>({ url: str, cached: described(bool, 'True when the answer came from the local cache of answers.') })),
      'The RDAP answers read, in order: the registry, then the registrar for a domain.',
    ),
    findings: arrayOf(ref('Finding')),
  },
  { description: 'The registration of an address, network, AS number or domain from RDAP: holder, abuse contact, dates, and for domains the registrar, status, name servers and expiry.' },
);

/** `netintel rdap`: registration data of addresses, networks, AS numbers and domains from RDAP. */
export const RDAP = defineOperation<RdapSettings, RdapResult>()({
  name: 'rdap',
  defaults: { expiryDays: DEFAULT_EXPIRY_DAYS, ca: undefined, failOn: undefined },
  command: {
    declare(command, kit) {
      command
        .description('registration data from RDAP (RFC 9083) of IP addresses, networks, AS numbers and domains: the holder, the abuse contact, dates; for domains the registrar, status, name servers, DNSSEC delegation and expiry')
        .argument('[targets...]', 'IP addresses, CIDR blocks, AS numbers (AS64496) or domains; read from stdin (one per line) when piped')
        .addOption(
          command
            .createOption('--expiry-days <n>', `a domain expiring within n days is a warning finding (rdap_domain_expires_soon); expired is an error`)
            .argParser(kit.integerIn('--expiry-days', 0, MAX_EXPIRY_DAYS))
            .default(DEFAULT_EXPIRY_DAYS),
        )
        .addOption(command.createOption('--tls-ca <file>', 'PEM file of CA certificates to trust for the RDAP servers, on top of the bundled roots'))
        .addHelpText(
          'after',
          [
            '',
            "The servers come from IANA's bootstrap files (netintel data update keeps them current; a",
            "starter copy is bundled). A domain's registrar record is read through the registry's related",
            'link; answers are kept in the data dir for a day. A 404 is exit 3.',
            'Examples:',
            '  netintel rdap 192.0.2.1                   # whom do I report this address to?',
            '  netintel rdap AS64496 2001:db8::/32',
            '  netintel rdap example.com -f json',
            '  netintel rdap example.com --expiry-days 30 --fail-on warning   # cron: exit 10 before expiry',
          ].join('\n'),
        )
        .addOption(kit.failOnOption());
    },
    refuseRemote(flags) {
      if (flags.tlsCa !== undefined) throw new NetintelError('usage', 'remote mode cannot send --tls-ca: the server trusts its own CAs; run without --server');
    },
    async settings(flags, kit) {
      const file = flags.tlsCa as string | undefined;
      const ca = file === undefined ? undefined : [...(await import('node:tls')).rootCertificates, ...kit.readCaFile(file, '--tls-ca')];
      return { expiryDays: (flags.expiryDays as number | undefined) ?? DEFAULT_EXPIRY_DAYS, ca, failOn: flags.failOn as FailOn | undefined };
    },
    run: (run) =>
      run.lookupTargets({
        targets: run.args,
        none: { usage: 'rdap needs a target: give IP addresses, CIDR blocks, AS numbers or domains, or pipe a list in' },
        // A registrar record that could not be read, or an expiry not checked, is an `unknown` finding: the run is partial (exit 7).
        failOn: { level: run.settings.failOn, findings: (result) => result.findings },
      }),
  },
  async lookup(ctx, settings) {
    const { lookupRdap } = await import('../engine/rdap/lookup-rdap.js');
    const { expiryDays, ca } = settings;
    return oneRecordEach((target) => lookupRdap(ctx, target, { expiryDays, ...(ca ? { connect: { ca } } : {}) }));
  },
  record: recordFromSchema({
    name: 'RdapResult',
    schema: RDAP_RECORD,
    kind: 'rdap',
    identity: ['target'],
    tableColumns: ['target', 'object', 'name', 'organisation', 'abuse.email', 'expires'],
    mainValue: ['abuse.email'],
    // CSV cells and -f value show lists as text: URLs, names and finding ids space-separated, status values and redacted fields (which hold spaces) by semicolons.
    presentColumn: (value, column) => {
      const rdap = value as RdapResult;
      if (column === 'sources') return rdap.sources.map((source) => source.url).join(' ');
      if (column === 'findings') return rdap.findings.map((item) => item.id).join(' ');
      if (column === 'status' || column === 'redacted') return rdap[column].join('; ');
      if (column === 'cidrs' || column === 'nameservers') return rdap[column].join(' ');
      return column.split('.').reduce<unknown>((at, key) => (at === null || typeof at !== 'object' ? undefined : (at as Record<string, unknown>)[key]), rdap);
    },
    view: async () => (await import('../output/human/rdap-view.js')).RDAP_VIEW,
  }),
  api: {
    method: 'GET',
    path: '/api/rdap',
    // Public registration data, as GET /api/ptr is public DNS: every plan.
    feature: null,
    query: (target, settings) => ({ target: target ?? undefined, expiry_days: String(settings.expiryDays) }),
    route: () => ({
      network: true,
      operationId: 'getRdap',
      summary: 'Registration data from RDAP: holder, abuse contact, dates, domain expiry',
      description:
        "The RDAP record (RFC 9083) of `target`, an IP address, CIDR block, AS number or domain, from the server the IANA bootstrap files name, with a domain's registrar record read through its related link. Every connection, the referral's too, meets the server's public-target rule. A domain expiring within `expiry_days` has the warning finding `rdap_domain_expires_soon`.",
      querystring: {
        type: 'object',
        required: ['target'],
        properties: {
          target: { type: 'string', minLength: 1, maxLength: 255, description: 'IP address, CIDR block, AS number (AS64496) or domain.' },
          expiry_days: { type: 'integer', minimum: 0, maximum: MAX_EXPIRY_DAYS, default: DEFAULT_EXPIRY_DAYS, description: 'Days before a domain\'s expiry from which it is a warning finding.' },
        },
      },
      responseDescription: 'The RDAP record of `netintel rdap -f json`.',
      examples: [{ query: '?target=192.0.2.1' }],
      handler: async (request: FastifyRequest, _reply, api) => {
        const { lookupRdap } = await import('../engine/rdap/lookup-rdap.js');
        const query = request.query as { target: string; expiry_days?: number };
        return lookupRdap(api.ctx, query.target, { expiryDays: query.expiry_days ?? DEFAULT_EXPIRY_DAYS });
      },
    }),
  },
});
