import type { CuratedAsnList } from './curated-asns.js';
import { isHostingCategory } from './curated-asns.js';
import {
  ADDRESS_SIGNALS,
  ASN_SIGNALS,
  isSignalName,
  SIGNAL_FLAG,
  SIGNAL_NAMES,
  SIGNAL_ORDER,
  type SecurityEvidence,
  type SecurityFlag,
  type SignalCoverage,
  type SignalName,
} from './signals.js';
import type { SignalIndex } from './signal-index.js';
import { threatVerdict, type ThreatLevel, type ThreatRule } from './threat-rule.js';

/** The source name of the embedded curated ASN list in evidence and `data status`. */
export const CURATED_SOURCE = 'curated-asns';

/**
 * The security verdict of an address: the flags of the API's IP record
 * (docs/api.md, The IP record; true: a signal fired; false: a source that
 * could give it was consulted and none fired; null: no such source was
 * consulted), the threat level with the rule row that fired, the operator
 * when known, and every signal that fired.
 */
export interface SecurityVerdict {
  is_vpn: boolean | null;
  is_proxy: boolean | null;
  is_tor: boolean | null;
  is_hosting: boolean | null;
  threat_level: ThreatLevel | null;
  threat_rule: ThreatRule | null;
  provider: string | null;
  evidence: readonly SecurityEvidence[];
  /** The signals consulted, and those no installed feed gives (then the flags they set may be null). */
  coverage: SignalCoverage;
}

/**
 * What the announcing AS says, computed once per AS. Every AS no list names
 * shares one object (`NO_ASN_SIGNAL`), and so do their verdicts.
 */
export interface AsnSignals {
  /** An AS announces the address (its lists were consulted). */
  readonly known: boolean;
  readonly evidence: readonly SecurityEvidence[];
}

const NO_EVIDENCE: readonly SecurityEvidence[] = Object.freeze([]);

/** An address with no AS: only address lists can speak. */
export const NO_ASN: AsnSignals = Object.freeze({ known: false, evidence: NO_EVIDENCE });

/** An AS that no list names. */
export const NO_ASN_SIGNAL: AsnSignals = Object.freeze({ known: true, evidence: NO_EVIDENCE });

const VERDICT_CACHE_SIZE = 65_536;
/** Which signal's operator name is the verdict's provider: the lowest rank that names one. */
const PROVIDER_RANK: Readonly<Record<SignalName, number>> = {
  vpn_range: 0,
  vpn_asn: 1,
  cloud_range: 2,
  datacenter_range: 3,
  hosting_asn: 4,
  tor_exit_list: Infinity,
  proxy_list: Infinity,
};

/**
 * The signals of one data set: the embedded curated ASN list and, when
 * installed, the compiled index of every downloaded feed. A verdict depends
 * only on the AS's signals and the index segment of the address, so one
 * object serves every address with the same pair (bounded cache); a bulk
 * run builds verdicts per distinct pair, not per row.
 */
export class SecuritySignals {
  private readonly asnCache = new Map<number, AsnSignals>();
  /** Verdicts by AS signals, then set code: shared by every address with the same signals. */
  private readonly verdicts = new Map<AsnSignals, Map<number, SecurityVerdict>>();
  private verdictCount = 0;
  /** Verdicts without evidence, by AS signals, then by what they say (bareVerdict). */
  private readonly bareVerdicts = new Map<AsnSignals, Map<string, SecurityVerdict>>();
  /** The same verdicts by AS signals, then by the sources and operators of the address's entries (bareVerdict). */
  private readonly bareVerdictsByEntries = new Map<AsnSignals, Map<string, SecurityVerdict>>();
  private bareVerdictCount = 0;
  /** Flags some installed address list can set (consulted for every address). */
  private readonly addressFlags: ReadonlySet<SecurityFlag>;
  /** Coverage of an address an AS announces, and of one no AS announces (shared by every verdict). */
  private readonly coverageWithAsn: SignalCoverage;
  private readonly coverageWithoutAsn: SignalCoverage;

  constructor(
    readonly curated: CuratedAsnList,
    readonly index: SignalIndex | null,
  ) {
    const installed = new Set<SignalName>();
    for (const source of index?.meta.sources ?? []) {
      if (isSignalName(source.signal) && ADDRESS_SIGNALS.includes(source.signal) && source.entries > 0) installed.add(source.signal);
    }
    this.addressFlags = new Set([...installed].map((signal) => SIGNAL_FLAG[signal]));
    const missing = Object.freeze(ADDRESS_SIGNALS.filter((signal) => !installed.has(signal)));
    const coverage = (withAsn: boolean): SignalCoverage =>
      Object.freeze({
        consulted: Object.freeze(SIGNAL_NAMES.filter((signal) => installed.has(signal) || (withAsn && ASN_SIGNALS.includes(signal)))),
        missing,
      });
    this.coverageWithAsn = coverage(true);
    this.coverageWithoutAsn = coverage(false);
  }

  /** The set code of an IPv4 address in the index (-1: no list holds it, or no index). */
  v4Set(address: number): number {
    return this.index === null ? -1 : this.index.v4SetAt(address);
  }

  /** The set code of an IPv6 address (16 network-order bytes). */
  v6Set(address: Uint8Array): number {
    return this.index === null ? -1 : this.index.v6SetAt(address);
  }

  /** The evidence the announcing AS gives (curated list and ASN feeds). */
  asnSignals(asn: number): AsnSignals {
    let signals = this.asnCache.get(asn);
    if (signals === undefined) {
      const evidence: SecurityEvidence[] = [];
      const curated = this.curated.byAsn.get(asn);
      const signal: SignalName | null = curated?.category === 'vpn' ? 'vpn_asn' : isHostingCategory(curated?.category) ? 'hosting_asn' : null;
      if (curated && signal !== null) {
        evidence.push({ signal, source: CURATED_SOURCE, matched: `AS${asn}`, provider: curated.provider, updated: this.curated.version });
      }
      if (this.index !== null) {
        for (const entry of this.index.asnEntries(asn)) {
          const source = this.index.meta.sources[entry.source]!;
          if (!isSignalName(source.signal)) continue;
          evidence.push({ signal: source.signal, source: source.name, matched: `AS${asn}`, provider: entry.label ?? source.provider, updated: source.updated });
        }
      }
      signals = evidence.length === 0 ? NO_ASN_SIGNAL : Object.freeze({ known: true, evidence: Object.freeze(sortEvidence(evidence)) });
      this.asnCache.set(asn, signals);
    }
    return signals;
  }

  /**
   * The verdict for an address given its AS's signals (`NO_ASN` when no AS
   * announces it) and its set code in the index. Verdicts are cached and
   * shared: one object per (AS signals, set code) pair. Treat them as
   * read-only.
   *
   * `withEvidence: false` is for answers that show the flags only (CSV and
   * table rows): an address a list holds then gets a verdict without its
   * `evidence` items, shared by every address with the same flags, threat
   * rule and provider. Most of a verdict's cost is its evidence, and a long
   * run over random addresses meets a new list entry in almost every match.
   */
  verdict(asn: AsnSignals, setCode: number, withEvidence = true): SecurityVerdict {
    if (!withEvidence && setCode !== -1) return this.bareVerdict(asn, setCode);
    let bySet = this.verdicts.get(asn);
    if (bySet === undefined) {
      bySet = new Map();
      this.verdicts.set(asn, bySet);
    }
    let verdict = bySet.get(setCode);
    if (verdict === undefined) {
      if (this.verdictCount >= VERDICT_CACHE_SIZE) {
        this.verdicts.clear();
        this.verdictCount = 0;
        bySet = new Map();
        this.verdicts.set(asn, bySet);
      }
      verdict = this.computeVerdict(asn, setCode);
      bySet.set(setCode, verdict);
      this.verdictCount++;
    }
    return verdict;
  }

  /**
   * A verdict without evidence depends on the AS's signals and, per entry
   * of the address's set in order, its source and operator: a handful of
   * combinations however many entries a run meets. Looked up by those
   * first, it is worked out (and interned by what it says) once per
   * combination, not once per address.
   */
  private bareVerdict(asn: AsnSignals, setCode: number): SecurityVerdict {
    const entries = this.addressEntries(setCode);
    const key = entries.map((id) => this.entryKey(id)).join('');
    let byEntries = this.bareVerdictsByEntries.get(asn);
    let verdict = byEntries?.get(key);
    if (verdict !== undefined) return verdict;
    if (this.bareVerdictCount >= VERDICT_CACHE_SIZE) {
      this.bareVerdictsByEntries.clear();
      this.bareVerdictCount = 0;
      byEntries = undefined;
    }
    if (byEntries === undefined) this.bareVerdictsByEntries.set(asn, (byEntries = new Map()));
    verdict = this.workOutBareVerdict(asn, entries);
    byEntries.set(key, verdict);
    this.bareVerdictCount++;
    return verdict;
  }

  /**
   * What of an entry a verdict without evidence depends on: its source and
   * its operator, length-prefixed so that no label can make two sequences
   * of entries read alike (-1: no label).
   */
  private entryKey(id: number): string {
    const index = this.index!;
    const label = index.entryLabel(id);
    return label === null ? `${index.entrySource(id)}:-1;` : `${index.entrySource(id)}:${label.length}:${label};`;
  }

  private workOutBareVerdict(asn: AsnSignals, entries: readonly number[]): SecurityVerdict {
    const index = this.index!;
    const signalled = entries.flatMap((id) => {
      const source = index.meta.sources[index.entrySource(id)]!;
      return isSignalName(source.signal) ? [{ signal: source.signal, provider: index.entryLabel(id) ?? source.provider }] : [];
    });
    const summary = this.summarize(asn.known, withAsnEvidence(sortEvidence(signalled), asn));
    const key = `${summary.is_vpn}|${summary.is_proxy}|${summary.is_tor}|${summary.is_hosting}|${summary.provider}`;
    let byFlags = this.bareVerdicts.get(asn);
    if (byFlags === undefined) this.bareVerdicts.set(asn, (byFlags = new Map()));
    let verdict = byFlags.get(key);
    if (verdict === undefined) {
      const { coverage, ...flags } = summary;
      byFlags.set(key, (verdict = Object.freeze({ ...flags, evidence: NO_EVIDENCE, coverage })));
    }
    return verdict;
  }

  private computeVerdict(asn: AsnSignals, setCode: number): SecurityVerdict {
    const evidence = withAsnEvidence(setCode === -1 ? [] : this.addressEvidence(setCode), asn);
    const { coverage, ...summary } = this.summarize(asn.known, evidence);
    return { ...summary, evidence, coverage };
  }

  /**
   * The flags, threat level and rule, and provider that signals say (in
   * evidence order: address matches first, then the AS's).
   */
  private summarize(known: boolean, items: ReadonlyArray<Pick<SecurityEvidence, 'signal' | 'provider'>>): Omit<SecurityVerdict, 'evidence'> {
    let tor = false;
    let proxy = false;
    let vpn = false;
    let hosting = false;
    // The provider: the first named operator in signal order (VPN range, VPN AS, cloud, datacenter, hosting AS).
    let provider: string | null = null;
    let providerRank = Infinity;
    for (const item of items) {
      const flag = SIGNAL_FLAG[item.signal];
      if (flag === 'is_tor') tor = true;
      else if (flag === 'is_proxy') proxy = true;
      else if (flag === 'is_vpn') vpn = true;
      else hosting = true;
      const rank = PROVIDER_RANK[item.signal];
      if (item.provider !== null && rank < providerRank) {
        provider = item.provider;
        providerRank = rank;
      }
    }
    const is_vpn = vpn ? true : this.addressFlags.has('is_vpn') || known ? false : null;
    const is_proxy = proxy ? true : this.addressFlags.has('is_proxy') ? false : null;
    const is_tor = tor ? true : this.addressFlags.has('is_tor') ? false : null;
    const is_hosting = hosting ? true : this.addressFlags.has('is_hosting') || known ? false : null;
    const { level, rule } = threatVerdict({ is_vpn, is_proxy, is_tor, is_hosting });
    const coverage = known ? this.coverageWithAsn : this.coverageWithoutAsn;
    return { is_vpn, is_proxy, is_tor, is_hosting, threat_level: level, threat_rule: rule, provider, coverage };
  }

  /** Dataset dates for the `meta` of an answer: the curated list and every source of the index. */
  dataDates(): Record<string, string | null> {
    const dates: Record<string, string | null> = { [CURATED_SOURCE]: this.curated.version };
    for (const source of this.index?.meta.sources ?? []) dates[source.name] = source.updated;
    return dates;
  }

  /**
   * The evidence of the entries of a set, per source only the most specific
   * ones (a /24 rather than the /16 around it).
   */
  private addressEvidence(code: number): SecurityEvidence[] {
    const items: SecurityEvidence[] = [];
    for (const id of this.addressEntries(code)) {
      const item = this.evidenceItem(id);
      if (item !== null) items.push(item);
    }
    return sortEvidence(items);
  }

  /**
   * The entries of a set that give evidence: per source only the most
   * specific ones. Most sets are one entry: that path reads a few words of
   * the index.
   */
  private addressEntries(code: number): number[] {
    const index = this.index!;
    if (code < -1) return [-2 - code];
    const ids = index.setEntries(code);
    const narrowest = new Map<number, number>();
    for (const id of ids) {
      const source = index.entrySource(id);
      narrowest.set(source, Math.min(narrowest.get(source) ?? Infinity, index.entrySpan(id)));
    }
    return ids.filter((id) => index.entrySpan(id) === narrowest.get(index.entrySource(id)));
  }

  private evidenceItem(id: number): SecurityEvidence | null {
    const index = this.index!;
    const source = index.meta.sources[index.entrySource(id)]!;
    if (!isSignalName(source.signal)) return null;
    return { signal: source.signal, source: source.name, matched: index.entryMatched(id), provider: index.entryLabel(id) ?? source.provider, updated: source.updated };
  }
}

/** Address evidence followed by the AS's, in evidence order. */
function withAsnEvidence<Item extends Pick<SecurityEvidence, 'signal' | 'provider'>>(address: Item[], asn: AsnSignals): ReadonlyArray<Item | SecurityEvidence> {
  if (address.length === 0) return asn.evidence;
  return asn.evidence.length === 0 ? address : sortEvidence<Item | SecurityEvidence>([...address, ...asn.evidence]);
}

/** Stable sort by signal weight (Tor, proxy, VPN, hosting), address matches before AS matches. */
function sortEvidence<Item extends Pick<SecurityEvidence, 'signal'>>(items: Item[]): Item[] {
  return items.length < 2 ? items : items.sort((a, b) => SIGNAL_ORDER[a.signal] - SIGNAL_ORDER[b.signal]);
}
