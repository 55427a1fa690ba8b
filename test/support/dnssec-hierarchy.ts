/**
 * A whole signed DNS tree made at test time, from its own root down, for
 * differential tests of DNSSEC validators: BIND's dnssec-keygen and
 * dnssec-signzone (Debian bind9-utils) sign it, NSD serves it, and the
 * root's KSK is the trust anchor.
 *
 *   .                      ECDSA P-256, NSEC
 *   <denial>-a<alg>.       one zone per DNSKEY algorithm (8, 10, 13, 14, 15, 16) and denial:
 *                          nsec, nsec3 (0 iterations), optout (NSEC3 opt-out), iter (NSEC3 with
 *                          200 iterations) and iteroo (200 iterations and opt-out); each with
 *                          data, a wildcard, empty non-terminals, a CNAME and two unsigned
 *                          delegations, one below an empty non-terminal
 *   rechain-a13.           NSEC3 hashed again at 12 iterations by the test's own re-chainer, which
 *                          must then validate as dnssec-signzone's own chains do
 *   fail.                  ECDSA P-256, NSEC, parent of one zone per way of breaking a chain:
 *                          wrong DS digest, unknown DS algorithm or digest type, a DS set with one
 *                          unknown entry, DS without DNSKEY, DS for a key the zone lacks, data signed
 *                          by a ZSK not in the DNSKEY RRset, every signature expired or not yet
 *                          valid, single RRSIGs expired, not yet valid, missing or corrupted,
 *                          rdata changed after signing, NSEC and NSEC3 records with bad signatures,
 *                          DS RRsets unsigned or expired, and unsigned delegations with a good or
 *                          a broken proof that they have no DS
 *
 * Each zone lists the questions (name, type) the tests ask about it.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { NsdZone } from './nsd.js';
import { rechainNsec3 } from './nsec3-rechain.js';
import { editDs, removeSignatures, replaceRdata, swapSignatures, takeKeysFrom, tamperSignatures, zoneLines } from './zone-edit.js';

const run = promisify(execFile);

/** One question of the differential test. */
export interface HierarchyQuestion {
  name: string;
  type: string;
  /** The zone the question is about, for grouping in reports. */
  zone: string;
}

export interface SignedHierarchy {
  zones: NsdZone[];
  /** The root KSK as dnssec-keygen wrote it (K*.key): netintel's --trust-anchor file and Unbound's trust-anchor-file. */
  anchorKeyFile: string;
  /** The same key as delv's `-a` file reads it. */
  delvAnchor: string;
  questions: HierarchyQuestion[];
  dir: string;
  cleanup(): Promise<void>;
}

/** The DNSKEY algorithms of the per-algorithm zones, as dnssec-keygen names them. */
const HIERARCHY_ALGORITHMS: Record<number, string> = {
  8: 'RSASHA256',
  10: 'RSASHA512',
  13: 'ECDSAP256SHA256',
  14: 'ECDSAP384SHA384',
  15: 'ED25519',
  16: 'ED448',
};

/** The denial variants of the per-algorithm zones: dnssec-signzone's flags, and the iterations to re-chain to. */
const HIERARCHY_DENIALS: Record<string, { sign: string[]; rechain?: number }> = {
  nsec: { sign: [] },
  nsec3: { sign: ['-3', '-', '-H', '0'] },
  optout: { sign: ['-3', 'AB12', '-H', '0', '-A'] },
  iter: { sign: ['-3', 'CD34', '-H', '0'], rechain: 200 },
  iteroo: { sign: ['-3', 'EF56', '-H', '0', '-A'], rechain: 200 },
};

interface Tools {
  /** Signs the zone's unsigned text again with more dnssec-signzone flags, and the key directory given (its own by default). */
  resign(extra: string[], keyDir?: string): Promise<string>;
  keyDir: string;
  /** A fresh key directory holding copies of this zone's KSK files and one new ZSK. */
  otherZskDir(): Promise<string>;
}

interface ZonePlan {
  zone: string;
  /** null: served unsigned. */
  algorithm: string | null;
  body: string;
  sign?: string[];
  rechain?: number;
  children?: ZonePlan[];
  /** What the parent publishes as DS for this zone, from the DS lines of its KSK. */
  ds?(lines: string[], spare: () => Promise<string[]>): Promise<string[]> | string[];
  /** Breaks the signed zone after signing. */
  edit?(signed: string, tools: Tools): Promise<string> | string;
  /** Questions, names relative to the zone (`@` for the apex). */
  questions: Array<[string, string]>;
}

const head = (zone: string): string => `$TTL 300\n$ORIGIN ${zone}\n@ IN SOA ns host 1 3600 600 86400 300\n@ IN NS ns\nns IN A 127.0.0.1\n`;

const GOOD_BODY = `www IN A 192.0.2.1
www IN TXT "www"
mail IN MX 10 www
*.wild IN A 192.0.2.2
*.wild IN TXT "wildcard"
real.wild IN A 192.0.2.3
cname IN CNAME www
a.b.c IN TXT "below two empty non-terminals"
`;

const GOOD_QUESTIONS: Array<[string, string]> = [
  ['@', 'SOA'], ['@', 'NS'], ['@', 'DNSKEY'], ['@', 'DS'],
  ['www', 'A'], ['www', 'TXT'], ['www', 'AAAA'], ['mail', 'MX'], ['mail', 'A'],
  ['nx', 'A'], ['a.nx', 'TXT'],
  ['c', 'A'], ['b.c', 'TXT'], ['a.b.c', 'TXT'],
  ['x.wild', 'A'], ['x.y.wild', 'TXT'], ['x.wild', 'AAAA'], ['wild', 'A'], ['real.wild', 'A'], ['x.real.wild', 'A'],
  ['cname', 'A'], ['cname', 'CNAME'],
  ['deleg', 'DS'], ['www.deleg', 'A'], ['nx.deleg', 'A'], ['deleg', 'SOA'],
  // ent. is an empty non-terminal above an unsigned delegation only: under opt-out it may have no NSEC3 (RFC 5155 §7.1).
  ['ent', 'A'], ['deleg.ent', 'DS'], ['www.deleg.ent', 'A'],
];

const unsignedChild = (zone: string): ZonePlan => ({ zone, algorithm: null, body: 'www IN A 192.0.2.9\n', questions: [] });

function goodZone(zone: string, algorithm: string, sign: string[], rechain?: number): ZonePlan {
  return { zone, algorithm, body: GOOD_BODY, sign, ...(rechain === undefined ? {} : { rechain }), children: [unsignedChild(`deleg.${zone}`), unsignedChild(`deleg.ent.${zone}`)], questions: GOOD_QUESTIONS };
}

const FAIL_BODY = 'www IN A 192.0.2.1\n*.wild IN TXT "wildcard"\n';
const FAIL_QUESTIONS: Array<[string, string]> = [['@', 'SOA'], ['@', 'DNSKEY'], ['@', 'DS'], ['www', 'A'], ['www', 'AAAA'], ['nx', 'A'], ['x.wild', 'TXT']];
const EXPIRED = ['-P', '-s', '20200101000000', '-e', '20200201000000'];
// Thirty days ahead, for thirty days: beyond any validator's allowance for clock skew.
const FUTURE = ['-P', '-s', '+2592000', '-e', '+2592000'];

function failZone(label: string, extra: Partial<ZonePlan> = {}): ZonePlan {
  return { zone: `${label}.fail.`, algorithm: 'ECDSAP256SHA256', body: FAIL_BODY, questions: FAIL_QUESTIONS, ...extra };
}

const FAIL_CHILDREN: ZonePlan[] = [
  failZone('wrongdigest', { ds: (lines) => lines.map((line) => editDs(line, { corruptDigest: true })) }),
  failZone('unknownalg', { ds: (lines) => lines.map((line) => editDs(line, { algorithm: 200 })) }),
  failZone('unknowndigest', { ds: (lines) => lines.map((line) => editDs(line, { digestType: 200 })) }),
  failZone('mixedds', { ds: (lines) => [...lines, ...lines.map((line) => editDs(line, { algorithm: 200 }))] }),
  { zone: 'nokey.fail.', algorithm: null, body: FAIL_BODY, questions: FAIL_QUESTIONS, ds: (_lines, spare) => spare() },
  failZone('tagmiss', { ds: (_lines, spare) => spare() }),
  failZone('hiddenzsk', { edit: async (signed, tools) => takeKeysFrom(await tools.resign([], await tools.otherZskDir()), signed) }),
  failZone('expiredkeys', { sign: EXPIRED }),
  failZone('futurekeys', { sign: FUTURE }),
  failZone('sigs', {
    body: 'good IN A 192.0.2.1\nexpired IN A 192.0.2.2\nfuture IN A 192.0.2.3\nnosig IN A 192.0.2.4\ncorrupt IN A 192.0.2.5\nchanged IN A 192.0.2.6\nm IN A 192.0.2.7\np IN A 192.0.2.8\n',
    edit: async (signed, tools) => {
      const [expired, future] = await Promise.all([tools.resign(EXPIRED), tools.resign(FUTURE)]);
      let zone = swapSignatures(signed, expired, 'expired.sigs.fail.', 'A');
      zone = swapSignatures(zone, future, 'future.sigs.fail.', 'A');
      zone = removeSignatures(zone, 'nosig.sigs.fail.', 'A');
      zone = tamperSignatures(zone, 'corrupt.sigs.fail.', 'A');
      zone = replaceRdata(zone, 'changed.sigs.fail.', 'A', '192.0.2.66');
      // The NSEC at m. and at p. cover the names just after them (ma., pa.) and deny AAAA at m. and p.
      zone = removeSignatures(zone, 'm.sigs.fail.', 'NSEC');
      return swapSignatures(zone, expired, 'p.sigs.fail.', 'NSEC');
    },
    questions: [
      ['good', 'A'], ['good', 'AAAA'], ['expired', 'A'], ['future', 'A'], ['nosig', 'A'], ['corrupt', 'A'], ['changed', 'A'],
      ['m', 'A'], ['m', 'AAAA'], ['ma', 'A'], ['p', 'A'], ['p', 'AAAA'], ['pa', 'A'], ['zz', 'A'], ['@', 'DNSKEY'],
    ],
  }),
  failZone('badnsec3', {
    sign: ['-3', '-', '-H', '0'],
    edit: (signed) =>
      zoneLines(signed)
        .filter((line) => line.type === 'NSEC3')
        .reduce((zone, line) => tamperSignatures(zone, line.owner, 'NSEC3'), signed),
  }),
  failZone('nosigds'),
  failZone('expiredds'),
  { zone: 'insecure.fail.', algorithm: null, body: FAIL_BODY, questions: [['www', 'A'], ['nx', 'A'], ['@', 'DS']] },
  { zone: 'badnods.fail.', algorithm: null, body: FAIL_BODY, questions: [['www', 'A'], ['nx', 'A'], ['@', 'DS']] },
];

const FAIL_PARENT: ZonePlan = {
  zone: 'fail.',
  algorithm: 'ECDSAP256SHA256',
  body: 'www IN A 192.0.2.1\n',
  children: FAIL_CHILDREN,
  edit: async (signed, tools) => {
    let zone = removeSignatures(signed, 'nosigds.fail.', 'DS');
    zone = swapSignatures(zone, await tools.resign(EXPIRED), 'expiredds.fail.', 'DS');
    return tamperSignatures(zone, 'badnods.fail.', 'NSEC');
  },
  questions: [['@', 'SOA'], ['@', 'DNSKEY'], ['www', 'A'], ['nx', 'A'], ['www', 'AAAA']],
};

function rootPlan(): ZonePlan {
  const tlds: ZonePlan[] = [];
  for (const [number, algorithm] of Object.entries(HIERARCHY_ALGORITHMS)) {
    for (const [denial, { sign, rechain }] of Object.entries(HIERARCHY_DENIALS)) tlds.push(goodZone(`${denial}-a${number}.`, algorithm, sign, rechain));
  }
  tlds.push(goodZone('rechain-a13.', 'ECDSAP256SHA256', ['-3', '99', '-H', '0'], 12));
  tlds.push(FAIL_PARENT);
  return {
    zone: '.',
    algorithm: 'ECDSAP256SHA256',
    body: '',
    children: tlds,
    questions: [['@', 'SOA'], ['@', 'NS'], ['@', 'DNSKEY'], ['ns', 'A'], ['ns', 'AAAA'], ['nosuchtld', 'A'], ['fail', 'DS']],
  };
}

/** Generates the keys, signs the tree and lists the questions. Takes some seconds (RSA keys, about fifty zones). */
export async function buildSignedHierarchy(): Promise<SignedHierarchy> {
  const dir = await mkdtemp(join(tmpdir(), 'netintel-hierarchy-'));
  const limit = createLimit(4);
  const tool = (file: string, args: string[]): Promise<string> => limit(async () => (await run(file, args, { maxBuffer: 64 * 1024 * 1024 })).stdout);
  const keygen = async (zone: string, algorithm: string, keyDir: string, ksk: boolean): Promise<string> => {
    const size = algorithm.startsWith('RSA') ? ['-b', '1024'] : [];
    return (await tool('dnssec-keygen', ['-q', '-K', keyDir, '-a', algorithm, ...size, ...(ksk ? ['-f', 'KSK'] : []), '-n', 'ZONE', zone])).trim();
  };
  const dsOf = async (keyFile: string): Promise<string[]> => (await tool('dnssec-dsfromkey', ['-2', keyFile])).trim().split('\n');
  const zones: NsdZone[] = [];
  const questions: HierarchyQuestion[] = [];
  let rootKsk = '';

  const build = async (plan: ZonePlan): Promise<string[]> => {
    const keyDir = join(dir, 'keys', plan.zone === '.' ? 'root' : plan.zone.slice(0, -1));
    await mkdir(keyDir, { recursive: true });
    const children = plan.children ?? [];
    // Settled, not raced: a failure must not leave signers writing into the directory being removed.
    const settled = await Promise.allSettled(children.map(build));
    const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const childDs = settled.map((outcome) => (outcome as PromiseFulfilledResult<string[]>).value);
    const delegations = children
      .map((child, i) => `${child.zone} IN NS ns.${child.zone}\nns.${child.zone} IN A 127.0.0.1\n${childDs[i]!.map((line) => `${line}\n`).join('')}`)
      .join('');
    const text = head(plan.zone) + plan.body + delegations;
    const absolute = (relative: string): string => (relative === '@' ? plan.zone : plan.zone === '.' ? `${relative}.` : `${relative}.${plan.zone}`);
    questions.push(...plan.questions.map(([name, type]) => ({ name: absolute(name), type, zone: plan.zone })));
    const spare = async (): Promise<string[]> => {
      const spareDir = join(dir, 'spare', plan.zone);
      await mkdir(spareDir, { recursive: true });
      return dsOf(join(spareDir, `${await keygen(plan.zone, 'ECDSAP256SHA256', spareDir, true)}.key`));
    };
    const nsdName = plan.zone === '.' ? '.' : plan.zone.slice(0, -1);
    if (plan.algorithm === null) {
      zones.push({ name: nsdName, text });
      return plan.ds ? plan.ds([], spare) : [];
    }
    const ksk = await keygen(plan.zone, plan.algorithm, keyDir, true);
    await keygen(plan.zone, plan.algorithm, keyDir, false);
    if (plan.zone === '.') rootKsk = join(keyDir, `${ksk}.key`);
    const unsignedFile = join(dir, `${nsdName === '.' ? 'root' : nsdName}.unsigned`);
    await writeFile(unsignedFile, text);
    let runs = 0;
    const sign = async (extra: string[], fromKeyDir = keyDir): Promise<string> => {
      const output = `${unsignedFile}.${runs++}.signed`;
      await tool('dnssec-signzone', ['-q', '-K', fromKeyDir, '-d', keyDir, '-S', '-O', 'full', ...extra, '-o', plan.zone, '-f', output, unsignedFile]);
      return readFile(output, 'utf8');
    };
    let signed = await sign([...(plan.sign ?? [])]);
    if (plan.rechain !== undefined) signed = await rechainNsec3(signed, plan.zone, plan.rechain, keyDir);
    if (plan.edit) {
      signed = await plan.edit(signed, {
        keyDir,
        resign: (extra, fromKeyDir) => sign([...(plan.sign ?? []), ...extra], fromKeyDir),
        otherZskDir: async () => {
          const other = `${keyDir}.other-zsk`;
          await mkdir(other, { recursive: true });
          for (const file of await readdir(keyDir)) if (file.startsWith(ksk)) await copyFile(join(keyDir, file), join(other, file));
          await keygen(plan.zone, plan.algorithm!, other, false);
          return other;
        },
      });
    }
    zones.push({ name: nsdName, text: signed });
    const ds = await dsOf(join(keyDir, `${ksk}.key`));
    return plan.ds ? plan.ds(ds, spare) : ds;
  };

  try {
    await build(rootPlan());
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const anchorKeyFile = await readFile(rootKsk, 'utf8');
  const keyLine = anchorKeyFile.split('\n').find((line) => /\sDNSKEY\s/.test(line) && !line.startsWith(';'))!;
  const [, , , flags, protocol, algorithm, ...key] = keyLine.trim().split(/\s+/);
  const delvAnchor = `trust-anchors {\n  "." static-key ${flags} ${protocol} ${algorithm} "${key.join('')}";\n};\n`;
  return { zones, anchorKeyFile, delvAnchor, questions, dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** At most `size` of the returned function's tasks run at once; the others wait their turn. */
function createLimit(size: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (active >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
