/**
 * Edits of zone files as dnssec-signzone writes them with `-O full` (one
 * record a line: owner, TTL, class, type, rdata), to break a signed zone in
 * one chosen place after signing: a tampered, missing or swapped RRSIG, a
 * changed rdata, a DS with a wrong digest or an unknown algorithm.
 */

/** One record line of a zone file, split into its fields. */
export interface ZoneLine {
  owner: string;
  ttl: string;
  klass: string;
  type: string;
  rdata: string[];
}

/** The record lines of a zone file; comments, blank lines and directives are left out. */
export function zoneLines(zone: string): ZoneLine[] {
  const lines: ZoneLine[] = [];
  for (const text of zone.split('\n')) {
    if (text.trim() === '' || text.startsWith(';') || text.startsWith('$')) continue;
    const [owner, ttl, klass, type, ...rdata] = text.trim().split(/\s+/);
    if (!owner || !ttl || !klass || !type) throw new Error(`not a record line of a -O full zone: ${text}`);
    lines.push({ owner, ttl, klass, type, rdata });
  }
  return lines;
}

/** The zone again, one record a line. */
export function zoneText(lines: readonly ZoneLine[]): string {
  return lines.map((line) => `${line.owner} ${line.ttl} ${line.klass} ${line.type} ${line.rdata.join(' ')}`).join('\n') + '\n';
}

const sameOwner = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** True for the RRSIG lines over `owner`'s RRset of `covered`. */
export function isSignatureOf(line: ZoneLine, owner: string, covered: string): boolean {
  return line.type === 'RRSIG' && sameOwner(line.owner, owner) && line.rdata[0] === covered;
}

function requireSome(lines: readonly ZoneLine[], what: string): void {
  if (lines.length === 0) throw new Error(`no ${what} in the zone`);
}

/** Changes one character in the middle of each signature over `owner` `covered`, so none verifies. */
export function tamperSignatures(zone: string, owner: string, covered: string): string {
  const lines = zoneLines(zone);
  const targets = lines.filter((line) => isSignatureOf(line, owner, covered));
  requireSome(targets, `RRSIG over ${owner} ${covered}`);
  for (const line of targets) {
    const signature = line.rdata.slice(8).join('');
    const middle = Math.floor(signature.length / 2);
    const flipped = signature[middle] === 'A' ? 'B' : 'A';
    line.rdata = [...line.rdata.slice(0, 8), signature.slice(0, middle) + flipped + signature.slice(middle + 1)];
  }
  return zoneText(lines);
}

/** Removes the signatures over `owner` `covered`. */
export function removeSignatures(zone: string, owner: string, covered: string): string {
  const lines = zoneLines(zone);
  const kept = lines.filter((line) => !isSignatureOf(line, owner, covered));
  if (kept.length === lines.length) throw new Error(`no RRSIG over ${owner} ${covered} in the zone`);
  return zoneText(kept);
}

/** Puts the signatures over `owner` `covered` from `from` (the same zone signed another way) in place of the zone's own. */
export function swapSignatures(zone: string, from: string, owner: string, covered: string): string {
  const replacement = zoneLines(from).filter((line) => isSignatureOf(line, owner, covered));
  requireSome(replacement, `RRSIG over ${owner} ${covered} in the other signing`);
  const lines = zoneLines(zone);
  const at = lines.findIndex((line) => isSignatureOf(line, owner, covered));
  if (at < 0) throw new Error(`no RRSIG over ${owner} ${covered} in the zone`);
  const kept = lines.filter((line) => !isSignatureOf(line, owner, covered));
  kept.splice(at, 0, ...replacement);
  return zoneText(kept);
}

/** Replaces the rdata of `owner` `type` (one record) after signing, so its signature no longer matches. */
export function replaceRdata(zone: string, owner: string, type: string, rdata: string): string {
  const lines = zoneLines(zone);
  const targets = lines.filter((line) => sameOwner(line.owner, owner) && line.type === type);
  requireSome(targets, `${owner} ${type}`);
  targets[0]!.rdata = rdata.split(/\s+/);
  return zoneText(lines);
}

/**
 * The zone with its DNSKEY RRset and the RRSIGs over it taken from
 * `keysFrom` (the same zone signed with other keys); everything else as it
 * is. Used to sign a zone's data with a key that its DNSKEY RRset does not hold.
 */
export function takeKeysFrom(zone: string, keysFrom: string): string {
  const isKeyLine = (line: ZoneLine): boolean => line.type === 'DNSKEY' || (line.type === 'RRSIG' && line.rdata[0] === 'DNSKEY');
  const keys = zoneLines(keysFrom).filter(isKeyLine);
  requireSome(keys, 'DNSKEY RRset in the other signing');
  return zoneText([...keys, ...zoneLines(zone).filter((line) => !isKeyLine(line))]);
}

/** A DS line (`owner TTL IN DS tag alg digest-type hex`) with some fields changed. */
export function editDs(line: string, change: { algorithm?: number; digestType?: number; corruptDigest?: boolean }): string {
  const [owner, ...rest] = line.trim().split(/\s+/);
  const at = rest.indexOf('DS');
  if (!owner || at < 0) throw new Error(`not a DS line: ${line}`);
  const [tag, algorithm, digestType, ...digest] = rest.slice(at + 1);
  let hex = digest.join('');
  if (change.corruptDigest) hex = hex.slice(0, -1) + (hex.endsWith('0') ? '1' : '0');
  return `${owner} ${rest.slice(0, at).join(' ')} DS ${tag} ${change.algorithm ?? algorithm} ${change.digestType ?? digestType} ${hex}`.replace(/\s+/g, ' ');
}
