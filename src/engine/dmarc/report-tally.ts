import { finding, type Finding } from '../findings.js';
import type { NetintelError } from '../../errors.js';
import type { Outcome } from '../outcome.js';
import type { DmarcReportRow } from './report-rows.js';
import type { DmarcSource } from './source-enrichment.js';

/** One source address across the reports: its volume, its results, what receivers did. */
export interface DmarcSourceSummary {
  source_ip: string;
  messages: number;
  /** Messages that failed DMARC (neither aligned DKIM nor aligned SPF passed). */
  failing_messages: number;
  dkim_pass: number;
  spf_pass: number;
  /** Messages by the disposition applied. */
  quarantined: number;
  rejected: number;
  /** Messages whose disposition a receiver overrode, by reason type (RFC 7489 §7.2.1). */
  overrides: Array<{ type: string; messages: number }>;
  /** The From domains it sent as (the first few). */
  header_from: string[];
  source: DmarcSource;
}

/** One reporting organisation: its reports, their messages and interval. */
export interface DmarcReporter {
  org_name: string;
  reports: number;
  messages: number;
  begin: string;
  end: string;
}

/** The summary of many aggregate reports: who sends as the domains, and what fails. */
export interface DmarcReportSummary {
  kind: 'dmarc-summary';
  /** One sentence: messages, sources, and the sources and share of volume that fail DMARC. */
  headline: string;
  messages: number;
  sources: number;
  failing_sources: number;
  failing_messages: number;
  /** The failing messages' share of all messages, 0 to 1. */
  failing_share: number;
  /** Distinct reports counted, and those seen again and not counted. */
  reports: number;
  duplicate_reports: number;
  /** Files given, and those that could not be read (see `errors`). */
  files: number;
  files_failed: number;
  /** The policy domains reported on. */
  domains: string[];
  /** The earliest begin and latest end of the reports' intervals, or null without a report. */
  begin: string | null;
  end: string | null;
  /** Sources with failing messages, most failing messages first. */
  failing: DmarcSourceSummary[];
  /** Sources all of whose messages pass, most messages first. */
  passing: DmarcSourceSummary[];
  reporters: DmarcReporter[];
  errors: Array<{ file: string; code: string; message: string }>;
  findings: Finding[];
}

const HEADER_FROM_KEPT = 5;

interface SourceCounts extends Omit<DmarcSourceSummary, 'overrides'> {
  overrides: Map<string, number>;
}

/**
 * The running counts of a run's rows, given file by file (`file`, then that
 * file's rows, a report's rows one after another). Memory grows with the
 * distinct sources and reporters, and with one key per report (to count
 * each once: a report is the same when its org_name and report_id are,
 * RFC 7489 §7.2.1.1), never with the records.
 */
export class DmarcTally {
  readonly #sources = new Map<string, SourceCounts>();
  readonly #reporters = new Map<string, DmarcReporter>();
  /** Each report's key. */
  readonly #reports = new Set<string>();
  /** The report whose rows are being counted, and its document: a report's rows come one after another. */
  #current: { key: string; file: string; duplicate: boolean } | undefined;
  readonly #domains = new Set<string>();
  readonly #errors: DmarcReportSummary['errors'] = [];
  #duplicates = 0;
  #files = 0;
  #failedFiles = 0;
  #messages = 0;

  /**
   * Counts a file as it was read: the file (failed when any outcome is an
   * error) and each of its rows. Returns the outcomes to show: the errors and
   * the rows of reports not read before.
   */
  read(file: string, outcomes: ReadonlyArray<Outcome<DmarcReportRow>>): Array<Outcome<DmarcReportRow>> {
    const failed = outcomes.find((outcome) => !outcome.ok);
    this.file(failed && !failed.ok ? failed.error : undefined, file);
    return outcomes.filter((outcome) => !outcome.ok || this.add(outcome.value));
  }

  /** Counts a file given, before its rows; `error` when it could not be read. */
  file(error?: NetintelError, file?: string): void {
    this.#current = undefined;
    this.#files += 1;
    if (error) {
      this.#failedFiles += 1;
      this.#errors.push({ file: file ?? '', code: error.code, message: error.message });
    }
  }

  /** Counts a row; false when its report was read before, from another file or entry or the same file given twice (a duplicate, not counted). */
  add(row: DmarcReportRow): boolean {
    const key = `${row.org_name}\u0000${row.report_id}`;
    let current = this.#current;
    if (current === undefined || current.key !== key || current.file !== row.file) {
      current = { key, file: row.file, duplicate: this.#reports.has(key) };
      this.#current = current;
      if (current.duplicate) this.#duplicates += 1;
      else {
        this.#reports.add(key);
        this.#reporter(row);
      }
    }
    if (current.duplicate) return false;
    this.#domains.add(row.domain);
    this.#messages += row.count;
    this.#reporters.get(row.org_name)!.messages += row.count;
    const counts = this.#source(row);
    counts.messages += row.count;
    if (row.dmarc === 'fail') counts.failing_messages += row.count;
    if (row.dkim === 'pass') counts.dkim_pass += row.count;
    if (row.spf === 'pass') counts.spf_pass += row.count;
    if (row.disposition === 'quarantine') counts.quarantined += row.count;
    if (row.disposition === 'reject') counts.rejected += row.count;
    for (const type of row.overrides) counts.overrides.set(type, (counts.overrides.get(type) ?? 0) + row.count);
    if (row.header_from !== '' && !counts.header_from.includes(row.header_from) && counts.header_from.length < HEADER_FROM_KEPT) counts.header_from.push(row.header_from);
    return true;
  }

  #reporter(row: DmarcReportRow): void {
    const known = this.#reporters.get(row.org_name);
    if (known === undefined) {
      this.#reporters.set(row.org_name, { org_name: row.org_name, reports: 1, messages: 0, begin: row.begin, end: row.end });
      return;
    }
    known.reports += 1;
    if (row.begin < known.begin) known.begin = row.begin;
    if (row.end > known.end) known.end = row.end;
  }

  #source(row: DmarcReportRow): SourceCounts {
    let counts = this.#sources.get(row.source_ip);
    if (counts === undefined) {
      counts = { source_ip: row.source_ip, messages: 0, failing_messages: 0, dkim_pass: 0, spf_pass: 0, quarantined: 0, rejected: 0, overrides: new Map(), header_from: [], source: row.source };
      this.#sources.set(row.source_ip, counts);
    }
    return counts;
  }

  summary(): DmarcReportSummary {
    const sources = [...this.#sources.values()].map(
      (counts): DmarcSourceSummary => ({ ...counts, overrides: [...counts.overrides].map(([type, messages]) => ({ type, messages })).sort((a, b) => b.messages - a.messages || a.type.localeCompare(b.type)) }),
    );
    const failing = sources.filter((source) => source.failing_messages > 0).sort((a, b) => b.failing_messages - a.failing_messages || b.messages - a.messages || a.source_ip.localeCompare(b.source_ip));
    const passing = sources.filter((source) => source.failing_messages === 0).sort((a, b) => b.messages - a.messages || a.source_ip.localeCompare(b.source_ip));
    const failingMessages = failing.reduce((sum, source) => sum + source.failing_messages, 0);
    const reporters = [...this.#reporters.values()].sort((a, b) => b.messages - a.messages || a.org_name.localeCompare(b.org_name));
    const share = this.#messages === 0 ? 0 : failingMessages / this.#messages;
    return {
      kind: 'dmarc-summary',
      headline: this.#reports.size === 0 ? `no aggregate report read from ${this.#files.toLocaleString('en-US')} file${this.#files === 1 ? '' : 's'}: nothing was checked` : headline(this.#messages, sources.length, failing.length, share),
      messages: this.#messages,
      sources: sources.length,
      failing_sources: failing.length,
      failing_messages: failingMessages,
      failing_share: Math.round(share * 10_000) / 10_000,
      reports: this.#reports.size,
      duplicate_reports: this.#duplicates,
      files: this.#files,
      files_failed: this.#failedFiles,
      domains: [...this.#domains].sort(),
      begin: reporters.reduce<string | null>((first, reporter) => (first === null || reporter.begin < first ? reporter.begin : first), null),
      end: reporters.reduce<string | null>((last, reporter) => (last === null || reporter.end > last ? reporter.end : last), null),
      failing,
      passing,
      reporters,
      errors: [...this.#errors],
      findings: findingsOf(failing, this.#errors, this.#duplicates, this.#reports.size),
    };
  }
}

function headline(messages: number, sources: number, failing: number, share: number): string {
  const count = (value: number, noun: string) => `${value.toLocaleString('en-US')} ${noun}${value === 1 ? '' : 's'}`;
  const base = `${count(messages, 'message')} from ${count(sources, 'source')}`;
  if (failing === 0) return `${base}; no source fails DMARC`;
  return `${base}; ${count(failing, 'source')} ${failing === 1 ? 'fails' : 'fail'} DMARC: ${percent(share)} of volume`;
}

/** What a run that read no report says: it checked nothing, which is not "no source fails". */
export const NO_REPORTS = 'no aggregate report was read: none in the files given, or none matched --domain or --since';

export function percent(share: number): string {
  const value = share * 100;
  return `${value > 0 && value < 0.1 ? '<0.1' : value.toFixed(1)}%`;
}

function findingsOf(failing: readonly DmarcSourceSummary[], errors: DmarcReportSummary['errors'], duplicates: number, reports: number): Finding[] {
  const findings: Finding[] = [];
  if (reports === 0) findings.push(finding('dmarc_no_reports', 'unknown', NO_REPORTS, 'RFC 7489 §7.2'));
  const unauthorised = failing.filter((source) => source.failing_messages === source.messages);
  const partly = failing.filter((source) => source.failing_messages < source.messages);
  if (unauthorised.length > 0) {
    findings.push(
      finding('dmarc_failing_source', 'warning', `${unauthorised.length === 1 ? '1 source sends as the domain and fails' : `${unauthorised.length} sources send as the domain and fail`} DMARC on every message: unauthorised, or a service whose SPF or DKIM is not aligned yet`, 'RFC 7489 §7.2', {
        sources: unauthorised.slice(0, 10).map((source) => source.source_ip),
      }),
    );
  }
  if (partly.length > 0) {
    findings.push(
      finding('dmarc_partly_failing_source', 'warning', `${partly.length === 1 ? '1 source fails DMARC on some of its messages' : `${partly.length} sources fail DMARC on some of their messages`}: often forwarding or a mailing list`, 'RFC 7489 §7.2', {
        sources: partly.slice(0, 10).map((source) => source.source_ip),
      }),
    );
  }
  if (errors.length > 0) {
    findings.push(finding('dmarc_report_unreadable', 'error', `${errors.length} file${errors.length === 1 ? '' : 's'} could not be read as aggregate reports`, 'RFC 7489 appendix C', { files: errors.slice(0, 10).map((error) => error.file) }));
  }
  if (duplicates > 0) {
    findings.push(finding('dmarc_duplicate_report', 'info', `${duplicates} report${duplicates === 1 ? ' was' : 's were'} read more than once and counted once (same org_name and report_id)`, 'RFC 7489 §7.2.1.1', { duplicates }));
  }
  return findings;
}
