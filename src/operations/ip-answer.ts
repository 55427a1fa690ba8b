import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IpInfoRecord } from '../engine/ip/ip-record.js';
import { createFormatter } from '../output/formatter.js';
import { IP_SCHEMA } from '../output/schemas/ip-schema.js';
import type { ApiContext } from '../server/api-route.js';
import { IP_ANSWER_TYPES as CONTENT_TYPES, PREMIUM_GROUPS } from './ip.js';

/** Says which fields were left out, on every free-tier IP answer (all formats). */
export const WITHHELD_HEADER = 'x-netintel-withheld';

export const FREE_TIER_NOTE = 'network and security need an API key (X-API-Key header) with a plan that includes them; see /docs#plans';

/** The note of an answer without the premium groups: a caller who sent a key is not told to send one. */
export function withheldNote(caller: { keyId: string | null; plan: { name: string } }): string {
  return caller.keyId === null ? FREE_TIER_NOTE : `network and security are not in the ${caller.plan.name} plan of this API key; see /docs#plans`;
}

/** The record as a plan may see it: without the premium groups unless the plan includes them. */
export function visibleRecord(record: IpInfoRecord, premium: boolean): Record<string, unknown> {
  if (premium) return record as unknown as Record<string, unknown>;
  const visible: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (!(PREMIUM_GROUPS as readonly string[]).includes(key)) visible[key] = value;
  }
  return visible;
}

/**
 * JSON of the record's sub-objects, kept per object: the engine shares one
 * location object among every address of a city and one network/security
 * pair among every address of a route (records are read-only), so most
 * answers are put together from text already made.
 */
const fragments = new WeakMap<object, string>();
/** `"key":` per member name: the same few names on every answer. */
const memberPrefixes = new Map<string, string>();

export function recordJson(record: Record<string, unknown>, note?: string): string {
  let out = '';
  for (const key in record) {
    const value = record[key];
    let text: string | undefined;
    if (value === null) {
      text = 'null';
    } else if (typeof value === 'object') {
      text = fragments.get(value);
      if (text === undefined) {
        text = JSON.stringify(value);
        fragments.set(value, text);
      }
    } else {
      text = JSON.stringify(value);
    }
    if (text === undefined) continue;
    let prefix = memberPrefixes.get(key);
    if (prefix === undefined) {
      prefix = `${JSON.stringify(key)}:`;
      memberPrefixes.set(key, prefix);
    }
    out += out === '' ? `{${prefix}${text}` : `,${prefix}${text}`;
  }
  if (note !== undefined) out += `${out === '' ? '{' : ','}"note":${JSON.stringify(note)}`;
  return out === '' ? '{}' : `${out}}`;
}

const FREE_CSV_COLUMNS = IP_SCHEMA.columns.filter((column) => !PREMIUM_GROUPS.some((group) => column.startsWith(`${group}.`)));

/**
 * GET /api/ipinfo's answer. Synchronous for JSON, the hot path; XML and CSV
 * load their encoders first.
 */
export function ipinfoAnswer(request: FastifyRequest, reply: FastifyReply, api: ApiContext): string | Promise<string> {
  const query = request.query as { ip?: string; format?: 'json' | 'xml' | 'csv' };
  const format = query.format ?? 'json';
  const ip = query.ip ?? request.netintel.client;
  const record = api.lookupIp(ip);
  const premium = request.netintel.plan.features.includes('premium');
  const visible = visibleRecord(record, premium);
  if (!premium) reply.header(WITHHELD_HEADER, PREMIUM_GROUPS.join(', '));
  reply.header('content-type', CONTENT_TYPES[format]);
  if (format === 'json') return recordJson(visible, premium ? undefined : withheldNote(request.netintel));
  return createFormatter({
    format,
    schema: IP_SCHEMA,
    columns: format === 'csv' && !premium ? FREE_CSV_COLUMNS : null,
    header: true,
    color: false,
    single: true,
  }).then((formatter) => formatter.start() + formatter.write({ ok: true, query: ip, value: visible }) + formatter.end());
}

