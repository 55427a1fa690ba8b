import type { Operation } from './operation.js';

/** An operation as the list names it: its name, and its descriptor, loaded on demand. */
export interface OperationEntry {
  readonly name: string;
  /** The descriptor of src/operations/<name>.ts; its `name` is the entry's. */
  readonly load: () => Promise<Operation>;
}

/**
 * Every operation, in the order `netintel --help` lists them: the one list
 * the CLI commands, the API routes, the OpenAPI components, the remote
 * calls and the library's lookups are made from (docs/design.md, Operations).
 * A descriptor loads when it is asked for, so that a run of one command
 * evaluates that command's declaration alone.
 */
export const OPERATIONS: readonly OperationEntry[] = [
  { name: 'ip', load: async () => (await import('./ip.js')).IP },
  { name: 'asn', load: async () => (await import('./asn.js')).ASN },
  { name: 'bulk', load: async () => (await import('./bulk.js')).BULK },
  { name: 'range', load: async () => (await import('./range.js')).RANGE },
  { name: 'dns', load: async () => (await import('./dns.js')).DNS },
  { name: 'ptr', load: async () => (await import('./ptr.js')).PTR },
  { name: 'rdap', load: async () => (await import('./rdap.js')).RDAP },
  { name: 'smtp', load: async () => (await import('./smtp.js')).SMTP },
  { name: 'tls', load: async () => (await import('./tls.js')).TLS },
  { name: 'mx', load: async () => (await import('./mx.js')).MX },
  { name: 'spf', load: async () => (await import('./spf.js')).SPF },
  { name: 'dkim', load: async () => (await import('./dkim.js')).DKIM },
  { name: 'headers', load: async () => (await import('./headers.js')).HEADERS },
  { name: 'bimi', load: async () => (await import('./bimi.js')).BIMI },
  { name: 'email', load: async () => (await import('./email.js')).EMAIL },
  { name: 'dmarc-report', load: async () => (await import('./dmarc-report.js')).DMARC_REPORT },
  { name: 'vpn', load: async () => (await import('./vpn.js')).VPN },
  { name: 'blacklist', load: async () => (await import('./blacklist.js')).BLACKLIST },
];

/** Every operation's descriptor, in the list's order: for what is made from all of them (the API, help, completion). */
export function loadOperations(): Promise<Operation[]> {
  return Promise.all(OPERATIONS.map(({ load }) => load()));
}
