import type { Severity } from '../../engine/findings.js';
import { escapeTerminalText } from '../terminal-text.js';
import { displayWidth } from './display-width.js';
import { toned, type Tone, type ViewContext } from './style.js';
import { wrapHanging, wrapText } from './wrap.js';

/**
 * The building blocks of the human views. Every text they take may come
 * from the network (a PTR name, a banner, a TXT record): each is escaped
 * (terminal-text.ts) before it is wrapped and coloured.
 */

/** Text made safe for the terminal, its line breaks kept as layout. */
export function safe(text: string): string {
  return escapeTerminalText(text, { keepNewlines: true });
}

/** The first line of a view: its subject, then the verdict in the verdict's colour. */
export function headline(ctx: ViewContext, subject: string, verdict: string, tone: Tone, separator = '  '): string {
  const marked = `${safe(subject)}${verdict === '' ? '' : `${separator}${safe(verdict)}`}`;
  const lines = wrapText(marked, ctx.width);
  const subjectLines = wrapText(safe(subject), ctx.width).length;
  // Colour only the verdict when subject and verdict share the first line; the whole headline otherwise.
  if (subjectLines === 1 && lines.length === 1 && verdict !== '') {
    return `${ctx.chalk.bold(safe(subject))}${separator}${toned(ctx, tone, safe(verdict))}\n`;
  }
  return `${lines.map((line) => toned(ctx, tone, line)).join('\n')}\n`;
}

/** A fact: a label and its value (lines of its own where the value has several); null or empty values are left out. */
export type Fact = readonly [label: string, value: string | number | boolean | null | undefined];

function factText(value: Fact[1]): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  const text = String(value);
  return text.trim() === '' ? null : text;
}

/**
 * Facts as a `label  value` list: labels in one column, each value wrapped
 * beside its label with a hanging indent. When the labels would leave the
 * values too little room, each value goes under its label instead.
 */
export function factList(ctx: ViewContext, facts: readonly Fact[]): string {
  const shown = facts.flatMap(([label, value]) => {
    const text = factText(value);
    return text === null ? [] : [[safe(label).replaceAll('\n', ' '), safe(text)] as const];
  });
  if (shown.length === 0) return '';
  const labelWidth = Math.max(...shown.map(([label]) => displayWidth(label)));
  const beside = ctx.width - labelWidth - 2 >= Math.min(24, ctx.width / 2);
  const lines: string[] = [];
  for (const [label, text] of shown) {
    if (beside) {
      const pad = ' '.repeat(labelWidth - displayWidth(label) + 2);
      const rest = ' '.repeat(labelWidth + 2);
      text.split('\n').forEach((line, index) => {
        const first = index === 0 ? ctx.chalk.cyan(label) + pad : rest;
        for (const wrapped of wrapHangingColoured(line, ctx.width, first, rest, labelWidth + 2)) lines.push(wrapped);
      });
    } else {
      lines.push(ctx.chalk.cyan(label));
      for (const line of text.split('\n')) for (const wrapped of wrapHanging(line, ctx.width, '    ', '      ')) lines.push(wrapped);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A value's lines after a label (its display width given: it may hold colour codes); wrapped lines hang two columns further in, so each item of a list reads as one. */
function wrapHangingColoured(text: string, width: number, first: string, rest: string, prefixWidth: number): string[] {
  const hang = text.startsWith(' ') ? '' : '  ';
  const lines = wrapText(text, Math.max(1, width - prefixWidth - hang.length));
  return lines.map((line, index) => (index === 0 ? `${first}${line}` : `${rest}${hang}${line}`).trimEnd());
}

/** A section heading inside a view. */
export function heading(ctx: ViewContext, text: string): string {
  return `${ctx.chalk.bold(safe(text))}\n`;
}

/** A finding as the views read it (SMTP findings carry no RFC). */
export interface FindingLike {
  id: string;
  severity: Severity;
  message: string;
  rfc?: string | null;
  /** Findings this one stands for, when several alike are shown as one (one per zone); 1 when absent. */
  count?: number;
}

const SEVERITY_ORDER: readonly Severity[] = ['error', 'warning', 'unknown', 'info', 'pass'];
const SEVERITY_TONE: Record<Severity, Tone> = { error: 'bad', warning: 'warn', unknown: 'warn', info: 'plain', pass: 'good' };
const SEVERITY_PLURAL: Record<Severity, [string, string]> = {
  error: ['error', 'errors'],
  warning: ['warning', 'warnings'],
  // A check that could not run: nothing is known, which is neither a problem nor a pass.
  unknown: ['not checked', 'not checked'],
  info: ['note', 'notes'],
  pass: ['check passed', 'checks passed'],
};

export function severityCount(severity: Severity, count: number): string {
  const [one, many] = SEVERITY_PLURAL[severity];
  return `${count} ${count === 1 ? one : many}`;
}

/** `2 errors, 3 warnings` (passes left out), `no problems found` when there are neither errors, warnings nor notes. */
export function findingCounts(findings: readonly Pick<FindingLike, 'severity'>[]): { text: string; tone: Tone } {
  const parts = SEVERITY_ORDER.filter((severity) => severity !== 'pass')
    .map((severity) => [severity, findings.filter((item) => item.severity === severity).length] as const)
    .filter(([, count]) => count > 0)
    .map(([severity, count]) => severityCount(severity, count));
  const tone: Tone = findings.some((item) => item.severity === 'error') ? 'bad' : findings.some((item) => item.severity === 'warning' || item.severity === 'unknown') ? 'warn' : 'good';
  return { text: parts.length > 0 ? parts.join(', ') : 'no problems found', tone };
}

/**
 * Findings grouped by severity, errors first: a heading per severity, then
 * each finding's message wrapped with a hanging indent, its id and RFC after
 * it. Passed checks are one line of ids unless every field is asked for.
 */
export function findingsBlock(ctx: ViewContext, findings: readonly FindingLike[]): string {
  const parts: string[] = [];
  for (const severity of SEVERITY_ORDER) {
    const group = findings.filter((item) => item.severity === severity);
    if (group.length === 0) continue;
    const title = severityCount(severity, group.reduce((sum, item) => sum + (item.count ?? 1), 0));
    const lines = [toned(ctx, SEVERITY_TONE[severity], title.charAt(0).toUpperCase() + title.slice(1))];
    if (severity === 'pass' && !ctx.all) {
      // One entry per check, with how many times it passed when more than once (an FCrDNS check per address).
      const times = new Map<string, number>();
      for (const item of group) times.set(safe(item.id), (times.get(safe(item.id)) ?? 0) + 1);
      const ids = [...times].map(([id, count]) => (count > 1 ? `${id} (${count})` : id)).join(', ');
      for (const wrapped of wrapHanging(ids, ctx.width, '  ', '  ')) lines.push(wrapped);
    } else {
      for (const item of group) {
        const reference = [item.id, item.rfc ?? null].filter((part) => part !== null).join(', ');
        for (const wrapped of wrapHanging(`${safe(item.message).replaceAll('\n', ' ')} [${safe(reference)}]`, ctx.width, '  - ', '    ')) lines.push(wrapped);
      }
    }
    parts.push(lines.join('\n'));
  }
  return parts.length > 0 ? `${parts.join('\n')}\n` : '';
}

/** Sections of a view, one blank line between them, empty ones left out. */
export function sections(...parts: readonly string[]): string {
  return parts.filter((part) => part !== '').join('\n');
}
