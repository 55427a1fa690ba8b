/**
 * A local RDAP service for the suite: one HTTPS server on 127.0.0.1 port 0
 * (its certificate from a test CA, for the address) that plays a registry
 * (`/registry/...`) and a registrar (`/registrar/...`), with objects that
 * misbehave as their names say, and a data dir whose RFC 9224 bootstrap
 * files send every query to it.
 *
 * Domains (under the `test` TLD): `example.test` (a registry record whose
 * related link names the registrar's), `redacted.test` (the registrar
 * withholds the registrant and abuse contact: RFC 9537 and "REDACTED FOR
 * PRIVACY"), `missing.test` (404), `busy.test` (429 with Retry-After: 1 the
 * first time), `limited.test` (429 with Retry-After: 3600, always),
 * `forever.test` (429 with Retry-After: 999999999, about 32 years, always),
 * `broken.test` (not JSON), `slow.test` (headers after `slowMs`), `huge.test`
 * (an answer over 1 MiB), `to-private.test` (its related link points to
 * 10.0.0.1), `lost-registrar.test` (the registrar answers 404), `soon.test`
 * (expires in 10 days), `gone.test` (expired yesterday), `no-expiry.test` (no
 * expiration event, and no registrar to give one), `loose-date.test` (its
 * expiry written as no RFC 3339 date), `two-expiry.test` (two expiration
 * events, the second in 2 days), `other-name.test` (the record of another
 * domain), `wrong-class.test` (an `ip network` record), `stray-registrar.test`
 * (the registrar's record names another domain), `evil.test` (terminal escapes and a bidi override in its registrar's name and its status), `fuzz.test` (its related link and size as `setFuzz` last said). Networks: any
 * address in 198.51.100.0/24 is redirected to another RIR's path; any address in 192.0.2.0/24, 2001:db8::/32 and AS64496 answer from the registry.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, issueCertificate, type TestCertificate } from './smtp-servers.js';

export interface RdapTestServer {
  port: number;
  /** The test CA's certificate, to trust. */
  ca: string;
  /** The base URL of the registry, `https://127.0.0.1:port/registry/`. */
  registry: string;
  /** A data dir holding bootstrap files that point at the registry. */
  dataDir: string;
  /** Every request path, in order. */
  requests: string[];
  /** Writes the bootstrap files into a data dir of the caller's. */
  bootstrapInto(dataDir: string): void;
  /** What `fuzz.test` answers next: the registry's related link, and the answer's exact size in octets (padded with a remark). */
  setFuzz(fuzz: { related?: string | null; octets?: number | null }): void;
  /** A fresh data dir with the bootstrap files (no cache). */
  freshDataDir(): string;
  close(): Promise<void>;
}

const DAY_MS = 86_400_000;

/** Midnight UTC `days` from today: the days until it stay the same all day, so goldens do not move. */
function isoDaysFromNow(days: number): string {
  return `${new Date(Date.now() + days * DAY_MS).toISOString().slice(0, 10)}T00:00:00Z`;
}

function vcard(properties: unknown[][]): unknown[] {
  return ['vcard', [['version', {}, 'text', '4.0'], ...properties]];
}

function registrarEntity(withAbuse: boolean): Record<string, unknown> {
  return {
    objectClassName: 'entity',
    handle: '9999',
    roles: ['registrar'],
    publicIds: [{ type: 'IANA Registrar ID', identifier: '9999' }],
    vcardArray: vcard([['fn', {}, 'text', 'Example Registrar, Inc.']]),
    entities: withAbuse
      ? [
          {
            objectClassName: 'entity',
            roles: ['abuse'],
            vcardArray: vcard([
              ['fn', {}, 'text', 'Abuse desk'],
              ['email', {}, 'text', 'abuse@registrar.test'],
              ['tel', { type: 'voice' }, 'uri', 'tel:+1.5555550100'],
            ]),
          },
        ]
      : [],
  };
}

function domainRecord(name: string, base: string, expiresInDays: number, related: string | null): Record<string, unknown> {
  return {
    objectClassName: 'domain',
    rdapConformance: ['rdap_level_0'],
    handle: `${name.toUpperCase()}-REG`,
    ldhName: name,
    status: ['client transfer prohibited'],
    nameservers: [
      { objectClassName: 'nameserver', ldhName: 'NS1.EXAMPLE.TEST' },
      { objectClassName: 'nameserver', ldhName: 'ns2.example.test' },
    ],
    secureDNS: { delegationSigned: true },
    events: [
      { eventAction: 'registration', eventDate: '2001-02-03T04:05:06Z' },
      { eventAction: 'expiration', eventDate: isoDaysFromNow(expiresInDays) },
      { eventAction: 'last changed', eventDate: '2024-01-02T03:04:05Z' },
    ],
    entities: [registrarEntity(false)],
    links: [
      { rel: 'self', href: `${base}registry/domain/${name}`, type: 'application/rdap+json' },
      ...(related === null ? [] : [{ rel: 'related', href: related, type: 'application/rdap+json' }]),
    ],
  };
}

function registrarRecord(name: string, redacted: boolean): Record<string, unknown> {
  const registrant = redacted
    ? vcard([
        ['fn', {}, 'text', 'REDACTED FOR PRIVACY'],
        ['org', {}, 'text', 'REDACTED FOR PRIVACY'],
      ])
    : vcard([
        ['fn', {}, 'text', 'Jane Holder'],
        ['org', {}, 'text', 'Example Holdings Ltd'],
        ['adr', { cc: 'GB' }, 'text', ['', '', '1 High Street', 'London', '', 'N1 1AA', '']],
      ]);
  const registrar = registrarEntity(!redacted);
  if (redacted) {
    registrar.entities = [
      {
        objectClassName: 'entity',
        roles: ['abuse'],
        vcardArray: vcard([
          ['email', {}, 'text', 'REDACTED FOR PRIVACY'],
          ['tel', {}, 'text', 'REDACTED FOR PRIVACY'],
        ]),
      },
    ];
  }
  return {
    objectClassName: 'domain',
    ldhName: name,
    entities: [{ objectClassName: 'entity', roles: ['registrant'], vcardArray: registrant }, registrar],
    ...(redacted
      ? {
          redacted: [
            { name: { type: 'Registrant Name' }, prePath: '$.entities[0].vcardArray[1][1]', method: 'removal' },
            { name: { description: 'Registrant Email' }, method: 'removal' },
          ],
        }
      : {}),
  };
}

function networkRecord(path: string): Record<string, unknown> {
  const v6 = path.includes(':');
  return {
    objectClassName: 'ip network',
    handle: v6 ? 'NET6-2001-DB8' : 'NET-192-0-2-0-1',
    startAddress: v6 ? '2001:db8::' : '192.0.2.0',
    endAddress: v6 ? '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff' : '192.0.2.255',
    ipVersion: v6 ? 'v6' : 'v4',
    name: 'TEST-NET-1',
    type: 'ASSIGNED PA',
    country: 'NL',
    cidr0_cidrs: [v6 ? { v6prefix: '2001:db8::', length: 32 } : { v4prefix: '192.0.2.0', length: 24 }],
    events: [
      { eventAction: 'registration', eventDate: '2010-01-01T00:00:00Z' },
      { eventAction: 'last changed', eventDate: '2020-06-07T08:09:10Z' },
    ],
    entities: [
      { objectClassName: 'entity', handle: 'ORG-EX1', roles: ['registrant'], vcardArray: vcard([['fn', {}, 'text', 'Example Networks B.V.']]) },
      {
        objectClassName: 'entity',
        handle: 'ORG-EX1-TECH',
        roles: ['technical'],
        entities: [
          {
            objectClassName: 'entity',
            handle: 'AB-EX1',
            roles: ['abuse'],
            vcardArray: vcard([
              ['fn', {}, 'text', 'Example abuse team'],
              ['email', { type: 'work' }, 'text', 'abuse@example.net'],
              ['tel', { type: ['work', 'voice'] }, 'uri', 'tel:+31-20-555-0100;ext=1'],
            ]),
          },
        ],
      },
    ],
  };
}

function autnumRecord(): Record<string, unknown> {
  return {
    objectClassName: 'autnum',
    handle: 'AS64496',
    startAutnum: 64496,
    endAutnum: 64496,
    name: 'EXAMPLE-AS',
    country: 'NL',
    events: [{ eventAction: 'registration', eventDate: '2012-03-04T05:06:07Z' }],
    entities: [{ objectClassName: 'entity', roles: ['abuse'], vcardArray: vcard([['email', {}, 'text', 'noc@example.net']]) }],
  };
}

/** The record as JSON text of exactly `octets` octets (a remark padded to fit), or as it is when null. */
function fuzzAnswer(record: Record<string, unknown>, octets: number | null): string {
  const plain = JSON.stringify({ ...record, remarks: [{ description: [''] }] });
  if (octets === null) return JSON.stringify(record);
  return JSON.stringify({ ...record, remarks: [{ description: ['x'.repeat(Math.max(0, octets - Buffer.byteLength(plain)))] }] });
}

export interface RdapServerOptions {
  /** How long `slow.test` waits before its headers (default 3000 ms). */
  slowMs?: number;
  /** The CA that issues the server's certificate (default: a CA of its own, `ca`). */
  issuer?: TestCertificate;
  /** TLDs the data dirs' bootstrap sends to the registry besides `test`. */
  tlds?: string[];
}

/** Starts the service and writes its data dir. */
export async function startRdapServer(options: RdapServerOptions = {}): Promise<RdapTestServer> {
  const ca = options.issuer ?? createCertificateAuthority('netintel RDAP test CA');
  const certificate = issueCertificate({ commonName: '127.0.0.1', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], issuer: ca });
  const requests: string[] = [];
  const busyAsked = new Set<string>();
  const slowMs = options.slowMs ?? 3000;
  let base = '';
  let fuzz: { related?: string | null; octets?: number | null } = {};
  const timers = new Set<NodeJS.Timeout>();
  const server = https.createServer({ cert: certificate.cert, key: certificate.key }, (request, response) => {
    const path = request.url ?? '/';
    requests.push(path);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/rdap+json', ...headers });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    const domain = /^\/(registry|registrar)\/domain\/([^/?]+)$/.exec(path);
    if (domain !== null) {
      const [, role, name] = domain as unknown as [string, string, string];
      const registrarUrl = `${base}registrar/domain/${name}`;
      if (role === 'registrar') {
        if (name === 'lost-registrar.test') return send(404, { errorCode: 404, title: 'Not Found' });
        if (name === 'stray-registrar.test') return send(200, { ...registrarRecord(name, false), ldhName: 'somewhere-else.test' });
        return send(200, registrarRecord(name, name === 'redacted.test'));
      }
      switch (name) {
        case 'missing.test':
          return send(404, { errorCode: 404, title: 'Not Found' });
        case 'busy.test':
          if (!busyAsked.has(name)) {
            busyAsked.add(name);
            return send(429, { errorCode: 429 }, { 'retry-after': '1' });
          }
          return send(200, domainRecord(name, base, 400, null));
        case 'limited.test':
          return send(429, { errorCode: 429 }, { 'retry-after': '3600' });
        case 'forever.test':
          return send(429, { errorCode: 429 }, { 'retry-after': '999999999' });
        case 'broken.test':
          return send(200, '{"objectClassName": "domain", "ldhName": ');
        case 'slow.test': {
          const timer = setTimeout(() => send(200, domainRecord(name, base, 400, null)), slowMs);
          timers.add(timer);
          return;
        }
        case 'huge.test':
          return send(200, { ...domainRecord(name, base, 400, null), remarks: [{ description: ['x'.repeat(1100 * 1024)] }] });
        case 'to-private.test':
          return send(200, domainRecord(name, base, 400, 'https://10.0.0.1/registrar/domain/to-private.test'));
        case 'evil.test': {
          const record = domainRecord(name, base, 400, null);
          record.entities = [{ ...registrarEntity(true), vcardArray: vcard([['fn', {}, 'text', 'Evil \u001b]0;pwned\u0007 Registrar \u202egnp.exe']]) }];
          record.status = ['ok\u001b[2J'];
          return send(200, record);
        }
        case 'fuzz.test':
          return send(200, fuzzAnswer(domainRecord(name, base, 400, fuzz.related ?? null), fuzz.octets ?? null));
        case 'soon.test':
          return send(200, domainRecord(name, base, 10, null));
        case 'gone.test':
          return send(200, domainRecord(name, base, -1, null));
        case 'loose-date.test': {
          // Seven days away, written as no RFC 3339 date-time: V8's Date.parse reads it as another day.
          const record = domainRecord(name, base, 400, null);
          record.events = [{ eventAction: 'expiration', eventDate: `${isoDaysFromNow(7).slice(0, 10)} junk` }];
          return send(200, record);
        }
        case 'two-expiry.test': {
          const record = domainRecord(name, base, 400, null);
          record.events = [
            { eventAction: 'expiration', eventDate: '2099-01-01T00:00:00Z' },
            { eventAction: 'expiration', eventDate: isoDaysFromNow(2) },
          ];
          return send(200, record);
        }
        case 'other-name.test':
          return send(200, domainRecord('somewhere-else.test', base, 400, null));
        case 'wrong-class.test':
          return send(200, { ...domainRecord(name, base, 400, null), objectClassName: 'ip network' });
        case 'stray-registrar.test':
          return send(200, domainRecord(name, base, 400, registrarUrl));
        case 'no-expiry.test': {
          const record = domainRecord(name, base, 400, null);
          record.events = (record.events as Array<{ eventAction: string }>).filter((event) => event.eventAction !== 'expiration');
          return send(200, record);
        }
        default:
          return send(200, domainRecord(name, base, 400, registrarUrl));
      }
    }
    // Another RIR's block: the registry redirects, as RIRs do for what they do not hold.
    if (path.startsWith('/registry/ip/198.51.100.')) {
      response.writeHead(302, { location: `${base}other-rir/ip/${path.slice('/registry/ip/'.length)}` });
      return response.end();
    }
    if (path.startsWith('/other-rir/ip/')) return send(200, { ...networkRecord(path), handle: 'OTHER-RIR-NET', startAddress: '198.51.100.0', endAddress: '198.51.100.255', cidr0_cidrs: [{ v4prefix: '198.51.100.0', length: 24 }] });
    if (path.startsWith('/registry/ip/')) return send(200, networkRecord(decodeURIComponent(path.slice('/registry/ip/'.length))));
    if (path === '/registry/autnum/64496') return send(200, autnumRecord());
    return send(404, { errorCode: 404 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `https://127.0.0.1:${port}/`;
  const registry = `${base}registry/`;
  const dirs: string[] = [];
  const freshDataDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'netintel-rdap-'));
    dirs.push(dir);
    writeBootstrap(dir, registry, options.tlds);
    return dir;
  };
  const dataDir = freshDataDir();
  return {
    port,
    ca: ca.cert,
    registry,
    dataDir,
    requests,
    freshDataDir,
    setFuzz: (next) => {
      fuzz = next;
    },
    bootstrapInto: (dir) => writeBootstrap(dir, registry, options.tlds),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Bootstrap files (RFC 9224) in a data dir's sources/, sending the test TLD, the documentation networks and AS64496 to `registry`. */
export function writeBootstrap(dataDir: string, registry: string, tlds: readonly string[] = []): void {
  mkdirSync(join(dataDir, 'sources'), { recursive: true });
  const file = (entries: string[]) => JSON.stringify({ version: '1.0', publication: '2026-01-01T00:00:00Z', services: [[entries, [registry]]] });
  writeFileSync(join(dataDir, 'sources', 'rdap-dns.json'), file(['test', ...tlds]));
  writeFileSync(join(dataDir, 'sources', 'rdap-ipv4.json'), file(['192.0.2.0/24', '198.51.100.0/24']));
  writeFileSync(join(dataDir, 'sources', 'rdap-ipv6.json'), file(['2001:db8::/32']));
  writeFileSync(join(dataDir, 'sources', 'rdap-asn.json'), file(['64496-64511']));
}
