/**
 * Which records of an answer section answer the question. A resolver
 * answers a name by following its aliases (RFC 1034 §4.3.2 step 3): the
 * answer holds records owned by the name asked, by the targets of the
 * CNAMEs met on the way, and the DNAMEs (RFC 6672 §2.2) that rewrote it;
 * of the type asked, or the CNAMEs themselves (and the RRSIGs over those).
 * Anything else in the answer section is data nobody asked for: RFC 2181
 * §5.4.1 ranks it below any answer, and a client that read it as the
 * answer would let a reply about `mx.evil.test` name the address of
 * `victim.example`, or an A record stand as the TXT asked. Those records
 * are left out and counted.
 */

/** The fields of a record the rule reads (dns-packet's decoded answers and netintel's typed ones both have them). */
export interface ChainRecord {
  name: string;
  type: string;
  data?: unknown;
}

/** The records on the question's chain, in answer order, and how many others were left out. */
export interface ChainRecords<R> {
  related: R[];
  ignored: number;
}

/** The question an answer section answers: its name and its type as dns-packet spells it. */
export interface ChainQuestion {
  name: string;
  type: string;
}

/**
 * Splits an answer section into the records that answer `question` and the
 * rest. Those that answer are owned by the name asked or by a name on its
 * CNAME/DNAME chain, and are of the type asked or CNAMEs, or RRSIGs over
 * those; at a DNAME's owner only the DNAME and its RRSIG.
 * Names are compared case-insensitively without a trailing dot (RFC 4343).
 */
export function chainRecords<R extends ChainRecord>(question: ChainQuestion, records: readonly R[]): ChainRecords<R> {
  const asked = bareName(question.name);
  const answersType = (record: ChainRecord): boolean => ofTypeAsked(record, question.type);
  // The usual answer: every record is of the name and type asked.
  let allAsked = true;
  for (const record of records) {
    if (bareName(record.name) !== asked || !answersType(record)) {
      allAsked = false;
      break;
    }
  }
  if (allAsked) return { related: [...records], ignored: 0 };

  const owners = new Set([asked]);
  // Owners of the DNAMEs that rewrote a name of the chain: only those DNAMEs (and their signatures) are kept there.
  const dnameOwners = new Set<string>();
  // Each round adds the names one more alias leads to; a chain cannot be longer than the records.
  for (let round = 0; round <= records.length; round++) {
    let grew = false;
    for (const record of records) {
      const owner = bareName(record.name);
      if (record.type === 'CNAME' && owners.has(owner) && typeof record.data === 'string') {
        grew = add(owners, bareName(record.data)) || grew;
      } else if (record.type === 'DNAME' && typeof record.data === 'string') {
        // RFC 6672 §2.2: a DNAME rewrites the names below its owner (not the owner itself).
        const target = bareName(record.data);
        for (const name of [...owners]) {
          if (!isBelow(name, owner)) continue;
          dnameOwners.add(owner);
          grew = add(owners, joinName(name.slice(0, name.length - owner.length - 1), target)) || grew;
        }
      }
    }
    if (!grew) break;
  }
  const related = records.filter((record) => {
    const owner = bareName(record.name);
    return (owners.has(owner) && answersType(record)) || (dnameOwners.has(owner) && (record.type === 'DNAME' || typeCovered(record) === 'DNAME'));
  });
  return { related, ignored: records.length - related.length };
}

/** A record of the type asked, a CNAME of the chain, or an RRSIG over either (any RRSIG when RRSIGs are asked). */
function ofTypeAsked(record: ChainRecord, type: string): boolean {
  if (record.type === type || record.type === 'CNAME') return true;
  if (record.type !== 'RRSIG') return false;
  const covered = typeCovered(record);
  return type === 'RRSIG' || covered === type || covered === 'CNAME';
}

/** The type an RRSIG covers (dns-packet's decoded form names it), or undefined. */
function typeCovered(record: ChainRecord): unknown {
  return record.type === 'RRSIG' && typeof record.data === 'object' && record.data !== null ? (record.data as { typeCovered?: unknown }).typeCovered : undefined;
}

function add(set: Set<string>, name: string): boolean {
  if (set.has(name)) return false;
  set.add(name);
  return true;
}

/** True when `name` is strictly below `ancestor` (`.` is above every name). */
function isBelow(name: string, ancestor: string): boolean {
  if (ancestor === '') return name !== '';
  return name.length > ancestor.length + 1 && name.endsWith(`.${ancestor}`);
}

function joinName(prefix: string, suffix: string): string {
  return suffix === '' ? prefix : `${prefix}.${suffix}`;
}

/** A name lower-cased, without its trailing dot; the root is ``. */
function bareName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
