import type { Finding } from '../findings.js';
import { contactOf, entityWithRole, isRedactedText, publicId, type RdapContact } from './rdap-entities.js';

/** What an RDAP query asked about (RFC 9082 §3.1): an address or network, an AS number, a domain. */
export type RdapObject = 'ip network' | 'autnum' | 'domain';

/** A contact as the record carries it. */
export interface RdapContactFields {
  name: string | null;
  email: string | null;
  phone: string | null;
}

export interface RdapRegistrar {
  name: string | null;
  iana_id: string | null;
}

/** One RDAP server that answered, in the order asked: the registry, then the registrar a domain's `related` link names. */
export interface RdapSource {
  url: string;
  /** True when the answer came from the local cache of answers. */
  cached: boolean;
}

/** The registration of an address, network, AS number or domain, from RDAP (docs/commands/rdap.md). */
export interface RdapResult {
  kind: 'rdap';
  /** The target as asked, normalised: an address, a CIDR block, `AS64496`, a domain in ASCII. */
  target: string;
  object: RdapObject;
  handle: string | null;
  name: string | null;
  /** Networks: the first and last address, the CIDR blocks (RFC 9083 §5.4 `cidr0_cidrs` when given), the family, the network's type. */
  start_address: string | null;
  end_address: string | null;
  cidrs: string[];
  ip_version: 4 | 6 | null;
  network_type: string | null;
  /** AS numbers: the first and last of the block registered. */
  start_autnum: number | null;
  end_autnum: number | null;
  /** Domains: the registrar, the status values (RFC 8056), the name servers, whether the delegation is signed, the expiry. */
  registrar: RdapRegistrar;
  status: string[];
  nameservers: string[];
  delegation_signed: boolean | null;
  expires: string | null;
  days_until_expiry: number | null;
  country: string | null;
  organisation: string | null;
  /** The contact with the `abuse` role (RFC 9083 §10.2.4), searched through nested entities. */
  abuse: RdapContactFields;
  registered: string | null;
  last_changed: string | null;
  /** Fields the registries withheld (RFC 9537 `redacted`, or "REDACTED FOR PRIVACY" values): said as withheld, not as missing. */
  redacted: string[];
  sources: RdapSource[];
  findings: Finding[];
}

type Json = Record<string, unknown>;

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/**
 * The date of the events with this action (RFC 9083 §4.5, the actions of
 * §10.2.3): the earliest (an expiry given twice is warned of by the sooner),
 * or for `last changed` the latest. Dates that are not RFC 3339 date-times
 * (§4.5 asks for them) are left out: V8's own reading of other text finds a
 * date in `2026-12-10 junk` or `Dec 4`, and a wrong expiry is worse than none.
 */
export function eventDate(answer: Json, action: string): string | null {
  if (!Array.isArray(answer.events)) return null;
  let chosen: number | null = null;
  for (const event of answer.events) {
    const item = event !== null && typeof event === 'object' ? (event as Json) : null;
    if (item === null || typeof item.eventAction !== 'string' || item.eventAction.toLowerCase() !== action) continue;
    const at = typeof item.eventDate === 'string' ? rfc3339Time(item.eventDate.trim()) : null;
    if (at === null) continue;
    if (chosen === null || (action === 'last changed' ? at > chosen : at < chosen)) chosen = at;
  }
  return chosen === null ? null : new Date(chosen).toISOString().replace('.000Z', 'Z');
}

/** RFC 3339 §5.6 `date-time` (`T` or a space between date and time, §5.6's note); its offset is required. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/** The time an RFC 3339 date-time names, in milliseconds, or null when the text is not one (or names no real day). */
export function rfc3339Time(value: string): number | null {
  const match = DATE_TIME.exec(value);
  if (match === null) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetHours = match[9] === undefined ? 0 : Number(match[9]);
  const offsetMinutes = match[10] === undefined ? 0 : Number(match[10]);
  if (hour > 23 || minute > 59 || second > 60 || offsetHours > 23 || offsetMinutes > 59) return null;
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999; a day the month lacks rolls over, and is refused.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  // A leap second (:60) is read as the second after (RFC 3339 §5.7).
  date.setUTCHours(hour, minute, second, match[7] === undefined ? 0 : Math.floor(Number(match[7]) * 1000));
  const sign = match[8]!.startsWith('-') ? -1 : 1;
  return date.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
}

/** The names of the fields an RFC 9537 `redacted` member says were withheld (its `name.description` or `name.type`). */
export function redactedNames(answer: Json): string[] {
  if (!Array.isArray(answer.redacted)) return [];
  const names: string[] = [];
  for (const item of answer.redacted.slice(0, 200)) {
    const name = item !== null && typeof item === 'object' ? ((item as Json).name as Json | undefined) : undefined;
    const label = name !== null && typeof name === 'object' ? text(name.description) ?? text(name.type) : null;
    if (label !== null && !names.includes(label)) names.push(label.slice(0, 200));
  }
  return names;
}

/** The CIDR blocks of a network (the `cidr0_cidrs` extension most RIRs send). */
function cidrsOf(answer: Json): string[] {
  if (!Array.isArray(answer.cidr0_cidrs)) return [];
  const blocks: string[] = [];
  for (const item of answer.cidr0_cidrs.slice(0, 1000)) {
    if (item === null || typeof item !== 'object') continue;
    const { v4prefix, v6prefix, length } = item as Json;
    const prefix = text(v4prefix) ?? text(v6prefix);
    if (prefix !== null && typeof length === 'number' && Number.isInteger(length)) blocks.push(`${prefix}/${length}`);
  }
  return blocks;
}

function nameserversOf(answer: Json): string[] {
  if (!Array.isArray(answer.nameservers)) return [];
  return answer.nameservers
    .slice(0, 100)
    .map((item) => (item !== null && typeof item === 'object' ? text((item as Json).ldhName) : null))
    .filter((name): name is string => name !== null)
    .map((name) => name.toLowerCase().replace(/\.$/, ''));
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string').slice(0, 100) : [];
}

function integerOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** The organisation holding the object: the registrant's organisation or name. */
function holderOf(answer: Json, redacted: string[]): string | null {
  const registrant = entityWithRole(answer, 'registrant');
  if (registrant === null) return null;
  const contact = contactOf(registrant);
  if (contact.organisation === null && contact.name === null && contact.redacted.length > 0) redacted.push('organisation');
  return contact.organisation ?? contact.name;
}

function abuseOf(answer: Json, redacted: string[]): RdapContact | null {
  const entity = entityWithRole(answer, 'abuse');
  if (entity === null) return null;
  const contact = contactOf(entity);
  for (const member of contact.redacted) if (member === 'email' || member === 'phone') redacted.push(`abuse.${member}`);
  return contact;
}

/** The parts of a record one answer gives (the lookup merges a registry's and a registrar's). */
export type RdapParts = Omit<RdapResult, 'kind' | 'target' | 'object' | 'sources' | 'findings'>;

/** Reads one RDAP answer (RFC 9083) into the record's parts; what is absent or malformed is null or empty. */
export function readAnswer(answer: Json): RdapParts {
  const redacted = redactedNames(answer);
  const registrarEntity = entityWithRole(answer, 'registrar');
  const registrar = registrarEntity === null ? null : contactOf(registrarEntity);
  const abuse = abuseOf(answer, redacted);
  const secure = answer.secureDNS !== null && typeof answer.secureDNS === 'object' ? (answer.secureDNS as Json) : null;
  const country = text(answer.country);
  const parts: RdapParts = {
    handle: text(answer.handle),
    name: text(answer.name),
    start_address: text(answer.startAddress),
    end_address: text(answer.endAddress),
    cidrs: cidrsOf(answer),
    ip_version: answer.ipVersion === 'v4' ? 4 : answer.ipVersion === 'v6' ? 6 : null,
    network_type: text(answer.type),
    start_autnum: integerOf(answer.startAutnum),
    end_autnum: integerOf(answer.endAutnum),
    registrar: {
      name: registrar === null ? null : registrar.name ?? registrar.organisation,
      iana_id: registrarEntity === null ? null : publicId(registrarEntity, /iana registrar id/i),
    },
    status: stringsOf(answer.status),
    nameservers: nameserversOf(answer),
    delegation_signed: secure !== null && typeof secure.delegationSigned === 'boolean' ? secure.delegationSigned : null,
    expires: eventDate(answer, 'expiration'),
    // Counted by the lookup, which knows the time.
    days_until_expiry: null,
    country: country !== null && isRedactedText(country) ? null : country,
    organisation: holderOf(answer, redacted),
    abuse: { name: abuse?.name ?? abuse?.organisation ?? null, email: abuse?.email ?? null, phone: abuse?.phone ?? null },
    registered: eventDate(answer, 'registration'),
    last_changed: eventDate(answer, 'last changed'),
    redacted,
  };
  return parts;
}

/**
 * A registry's parts completed by a registrar's: the registry is the
 * authority on the domain's dates, status and delegation, so its values
 * stand; the registrar fills what the registry left out, and its abuse
 * contact (the one ICANN requires registrars to publish) comes first.
 */
export function mergeParts(registry: RdapParts, registrar: RdapParts): RdapParts {
  const merged = { ...registry } as Record<string, unknown>;
  for (const [key, value] of Object.entries(registrar)) {
    const own = merged[key];
    if (own === null || (Array.isArray(own) && own.length === 0)) merged[key] = value;
  }
  const abuse = registrar.abuse.email !== null || registrar.abuse.phone !== null ? registrar.abuse : registry.abuse;
  const registrarName = registry.registrar.name ?? registrar.registrar.name;
  const ianaId = registry.registrar.iana_id ?? registrar.registrar.iana_id;
  const redacted = [...new Set([...registry.redacted, ...registrar.redacted])];
  return { ...(merged as RdapParts), abuse, registrar: { name: registrarName, iana_id: ianaId }, redacted };
}

/** The RDAP link a registry gives to the registrar's record (RFC 9083 §4.2 `related`, RFC 8288), or null. */
export function relatedLink(answer: Json): string | null {
  if (!Array.isArray(answer.links)) return null;
  for (const item of answer.links.slice(0, 100)) {
    if (item === null || typeof item !== 'object') continue;
    const link = item as Json;
    const type = text(link.type)?.toLowerCase() ?? '';
    if (text(link.rel)?.toLowerCase() === 'related' && typeof link.href === 'string' && (type === '' || type.includes('rdap+json'))) return link.href;
  }
  return null;
}
