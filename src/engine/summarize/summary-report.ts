/**
 * The report of `netintel summarize`: totals and ranked tables, all counts.
 * Every count is per occurrence (an address seen three times counts three);
 * percentages are of all addresses found.
 */

/** One ranked row: its place, its key (a country code, `AS15169`, ...), a name for people, the count and its share. */
export interface RankedRow {
  /** 1-based place in the table. */
  rank: number;
  key: string;
  name: string;
  count: number;
  /** Of all addresses found, rounded to two decimals. */
  percent: number;
}

/** A count and its share of all addresses found. */
export interface Share {
  count: number;
  percent: number;
}

/**
 * A ranked table: the top rows, then `other` (the rows beyond the top) and
 * `no_data` (addresses the table has no key for: reserved, failed lookups,
 * records without that field), so that the counts add up to all addresses.
 */
export interface RankedTable {
  rows: RankedRow[];
  other: Share;
  no_data: Share;
  /** How many different keys the table counted (top rows and `other` together). */
  distinct: number;
}

/**
 * The security flags: each address counts under every flag its record sets,
 * so the rows overlap and need not add up; `no_data` counts the addresses
 * without a record (reserved, failed lookups).
 */
export interface FlagTable {
  rows: RankedRow[];
  no_data: Share;
}

export interface SummaryTotals {
  /** Every line read, blank and `#` comment lines included. */
  lines: number;
  /** Address occurrences found. */
  addresses: number;
  ipv4: number;
  ipv6: number;
  /** Distinct addresses: exact up to the cap, then the cap itself with `unique_capped` set (a lower bound). */
  unique: number;
  unique_capped: boolean;
  /** Occurrences of private, loopback, documentation and other special-purpose addresses (never looked up in the datasets). */
  reserved: number;
  /** Lines that are neither blank nor a `#` comment and hold no address. */
  invalid_lines: number;
  /** Occurrences whose lookup failed (remote mode: the server refused or failed). */
  lookup_failures: number;
}

export interface SummaryReport {
  totals: SummaryTotals;
  /** The rows each ranked table shows before `other` (`--top`). */
  top: number;
  countries: RankedTable;
  asns: RankedTable;
  cities: RankedTable;
  flags: FlagTable;
  threat_levels: RankedTable;
}

/** The ranked tables of a report, in the order the views show them. */
export const RANKED_SECTIONS = ['countries', 'asns', 'cities', 'threat_levels'] as const;
export type RankedSection = (typeof RANKED_SECTIONS)[number];

/** The share of `count` in `total`, as a percentage with two decimals; 0 of 0 is 0. */
export function shareOf(count: number, total: number): Share {
  return { count, percent: total === 0 ? 0 : Math.round((count / total) * 10000) / 100 };
}
