import dnsPacket from 'dns-packet';
import type { Answer } from 'dns-packet';
import type { DnsAnswer, DnsCaaData, DnsMxData, DnsSoaData, DnsSrvData, DnsTxtData } from './dns-result.js';
import { OTHER_DNS_TYPE_NAMES, type OtherDnsType } from './dns-type.js';

/**
 * Turns one decoded resource record into netintel's typed answer, or null
 * for the OPT pseudo-record (RFC 6891), which is not data.
 */
export function toDnsAnswer(rr: Answer): DnsAnswer | null {
  if (rr.type === 'OPT') return null;
  const name = rr.name;
  const ttlSeconds = rr.ttl ?? 0;
  switch (rr.type) {
    case 'A':
    case 'AAAA':
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return { name, type: rr.type, ttl_seconds: ttlSeconds, data: rr.data };
    case 'MX':
      return { name, type: 'MX', ttl_seconds: ttlSeconds, data: mxData(rr.data) };
    case 'SOA':
      return { name, type: 'SOA', ttl_seconds: ttlSeconds, data: soaData(rr.data) };
    case 'TXT':
      return { name, type: 'TXT', ttl_seconds: ttlSeconds, data: txtData(rr.data) };
    case 'CAA':
      return { name, type: 'CAA', ttl_seconds: ttlSeconds, data: caaData(rr.data) };
    case 'SRV':
      return { name, type: 'SRV', ttl_seconds: ttlSeconds, data: srvData(rr.data) };
    default:
      return { name, type: typeMnemonic(rr.type), ttl_seconds: ttlSeconds, data: genericData(rr) };
  }
}

function mxData(data: dnsPacket.MxData): DnsMxData {
  return { preference: data.preference ?? 0, exchange: data.exchange };
}

function soaData(data: dnsPacket.SoaData): DnsSoaData {
  return {
    mname: data.mname,
    rname: data.rname,
    serial: data.serial ?? 0,
    refresh: data.refresh ?? 0,
    retry: data.retry ?? 0,
    expire: data.expire ?? 0,
    minimum: data.minimum ?? 0,
  };
}

function txtData(data: dnsPacket.TxtData): DnsTxtData {
  const parts = (Array.isArray(data) ? data : [data]).map((part) =>
    typeof part === 'string' ? Buffer.from(part, 'utf8') : part,
  );
  // Joined as octets before decoding, so a UTF-8 sequence split across two
  // character strings comes out whole.
  return { text: Buffer.concat(parts).toString('utf8'), strings: parts.map((part) => part.toString('utf8')) };
}

function caaData(data: dnsPacket.CaaData): DnsCaaData {
  return { flags: data.flags ?? (data.issuerCritical ? 128 : 0), tag: data.tag, value: data.value };
}

function srvData(data: dnsPacket.SrvData): DnsSrvData {
  return { priority: data.priority ?? 0, weight: data.weight ?? 0, port: data.port, target: data.target };
}

const OTHER_TYPES: ReadonlySet<string> = new Set(OTHER_DNS_TYPE_NAMES);
const GENERIC_RECORD_TYPES: ReadonlySet<string> = new Set(['DS', 'DNSKEY', 'RRSIG', 'NSEC', 'NSEC3', 'TLSA']);
// Types newer than dns-packet's table, by number (RFC 9460).
const NUMBERED_TYPES: Record<string, string> = { UNKNOWN_64: 'SVCB', UNKNOWN_65: 'HTTPS' };

/** dns-packet names types it does not know `UNKNOWN_<n>`; RFC 3597 §5 spells them `TYPE<n>`. */
function typeMnemonic(type: string): OtherDnsType {
  if (OTHER_TYPES.has(type) || GENERIC_RECORD_TYPES.has(type)) return type as OtherDnsType;
  if (NUMBERED_TYPES[type]) return NUMBERED_TYPES[type] as OtherDnsType;
  const unknown = /^UNKNOWN_(\d+)$/.exec(type);
  // A mnemonic added by a later dns-packet release is kept as it is.
  return (unknown ? `TYPE${unknown[1]}` : type) as OtherDnsType;
}

// dns-packet's per-type codec (runtime export, not in its type declarations).
const recordCodec = (dnsPacket as unknown as { record(type: string): { encode(data: unknown): Buffer } }).record;

/**
 * Name-valued types (DNAME) keep their name; everything else is shown in the
 * RFC 3597 §5 generic form, `\# <rdata length> <hex>`, which is exact for
 * any type without netintel having to model it.
 */
function genericData(rr: Answer): string {
  const data: unknown = 'data' in rr ? rr.data : undefined;
  if (typeof data === 'string') return data;
  let rdata: Buffer;
  if (Buffer.isBuffer(data)) {
    rdata = data;
  } else {
    try {
      // The codec prefixes the rdata with its 2-octet length.
      rdata = recordCodec(rr.type).encode(data).subarray(2);
    } catch {
      rdata = Buffer.alloc(0);
    }
  }
  return rdata.length === 0 ? '\\# 0' : `\\# ${rdata.length} ${rdata.toString('hex')}`;
}
