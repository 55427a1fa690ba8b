/**
 * The threat_level rule table: every combination of the four flags, the
 * level and the rule row that fires.
 */
import { describe, expect, it } from 'vitest';
import { THREAT_RULES, threatVerdict, type ThreatFlags } from '../../../src/engine/security/threat-rule.js';

const values = [true, false, null] as const;

/**
 * The table as documented, in words: Tor, proxy, VPN when their flag is
 * true; null when nothing was consulted; unknown when a Tor or proxy list
 * was not consulted; else hosting or no_signal.
 */
function expected(flags: ThreatFlags): { level: string | null; rule: string | null } {
  if (flags.is_tor) return { level: 'high', rule: 'tor_exit' };
  if (flags.is_proxy) return { level: 'high', rule: 'open_proxy' };
  if (flags.is_vpn) return { level: 'medium', rule: 'vpn' };
  if (Object.values(flags).every((value) => value === null)) return { level: null, rule: null };
  if (flags.is_tor === null || flags.is_proxy === null) return { level: 'unknown', rule: 'signals_missing' };
  if (flags.is_hosting) return { level: 'low', rule: 'hosting' };
  return { level: 'low', rule: 'no_signal' };
}

describe('threatVerdict', () => {
  it('follows the table for all 81 combinations of true / false / null flags', () => {
    let checked = 0;
    for (const is_tor of values)
      for (const is_proxy of values)
        for (const is_vpn of values)
          for (const is_hosting of values) {
            const flags = { is_tor, is_proxy, is_vpn, is_hosting };
            expect(threatVerdict(flags), JSON.stringify(flags)).toEqual(expected(flags));
            checked++;
          }
    expect(checked).toBe(81);
  });

  it.each([
    [{ is_tor: true, is_proxy: false, is_vpn: true, is_hosting: true }, 'high', 'tor_exit'],
    [{ is_tor: false, is_proxy: true, is_vpn: false, is_hosting: true }, 'high', 'open_proxy'],
    [{ is_tor: null, is_proxy: null, is_vpn: true, is_hosting: true }, 'medium', 'vpn'],
    [{ is_tor: false, is_proxy: false, is_vpn: false, is_hosting: true }, 'low', 'hosting'],
    [{ is_tor: false, is_proxy: false, is_vpn: false, is_hosting: false }, 'low', 'no_signal'],
    [{ is_tor: false, is_proxy: null, is_vpn: false, is_hosting: false }, 'unknown', 'signals_missing'],
    [{ is_tor: null, is_proxy: null, is_vpn: false, is_hosting: true }, 'unknown', 'signals_missing'],
    [{ is_tor: null, is_proxy: null, is_vpn: null, is_hosting: null }, null, null],
  ] as const)('%j is %s by rule %s', (flags, level, rule) => {
    expect(threatVerdict(flags)).toEqual({ level, rule });
  });

  it('documents one row per rule, in the order they are tried', () => {
    expect(THREAT_RULES.map((row) => [row.rule, row.level])).toEqual([
      ['tor_exit', 'high'],
      ['open_proxy', 'high'],
      ['vpn', 'medium'],
      ['signals_missing', 'unknown'],
      ['hosting', 'low'],
      ['no_signal', 'low'],
    ]);
  });
});
