import fc from 'fast-check';
import stripAnsi from 'strip-ansi';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import type { DnsResult } from '../../src/engine/dns/dns-result.js';
import { presentDnsData } from '../../src/output/dns-presentation.js';
import { factList, findingsBlock, safe } from '../../src/output/human/blocks.js';
import { displayWidth } from '../../src/output/human/display-width.js';
import { fitColumns, fittedTable, type TableColumn } from '../../src/output/human/fitted-table.js';
import { viewContext } from '../../src/output/human/style.js';
import { wrapHanging, wrapText } from '../../src/output/human/wrap.js';
import { DNS_SCHEMA } from '../../src/output/schemas/dns-schema.js';
import { ok } from './fixtures.js';
import { render } from './render.js';

/** Words of a text: what is between spaces and line breaks. */
const words = (text: string) => text.split(/[ \n]+/).filter((word) => word !== '');
const widthOf = (line: string) => stringWidth(stripAnsi(line));

/** Text of words, wide characters and emoji among them, separated by one or more spaces. */
const word = fc.array(fc.constantFrom('a', 'b', 'Z', '9', '.', '-', '漢', '字', 'é', '😀', 'ｱ'), { minLength: 1, maxLength: 30 }).map((chars) => chars.join(''));
const text = fc.array(fc.tuple(word, fc.constantFrom(' ', '  ', '\n')), { minLength: 0, maxLength: 40 }).map((parts) => parts.map(([w, gap]) => w + gap).join(''));

describe('wrapText', () => {
  it('puts no line over the width', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 120 }), (input, width) => {
        for (const line of wrapText(input, width)) expect(widthOf(line)).toBeLessThanOrEqual(width);
      }),
    );
  });

  it('loses no word: the words of the output are the words of the input when each fits the width', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 120 }), (input, width) => {
        fc.pre(words(input).every((item) => stringWidth(item) <= width));
        expect(words(wrapText(input, width).join('\n'))).toEqual(words(input));
      }),
    );
  });

  it('breaks hard only words wider than the width, and loses none of their characters', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 40 }), (input, width) => {
        const output = words(wrapText(input, width).join('\n'));
        // Every character, in order.
        expect(output.join('')).toBe(words(input).join(''));
        // Each output word is an input word, or a piece of one wider than the width.
        const wide = words(input).filter((item) => stringWidth(item) > width);
        for (const piece of output) {
          if (words(input).includes(piece)) continue;
          expect(wide.some((item) => item.includes(piece))).toBe(true);
        }
      }),
    );
  });

  it('breaks a token longer than the width (a TXT record, a DKIM key) into lines of the width', () => {
    const key = 'p=' + 'A'.repeat(200);
    const lines = wrapText(key, 50);
    expect(lines.map((line) => line.length)).toEqual([50, 50, 50, 50, 2]);
    expect(lines.join('')).toBe(key);
  });

  it('keeps a line break of the text and the indentation a line starts with', () => {
    expect(wrapText('one two\n  three four five', 12)).toEqual(['one two', '  three four', '  five']);
  });

  it('counts an East Asian wide character as two columns', () => {
    expect(wrapText('漢字漢字 漢字', 9)).toEqual(['漢字漢字', '漢字']);
  });
});

describe('wrapHanging', () => {
  it('indents the lines a text wraps into under the first one, none over the width', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 10, max: 100 }), (input, width) => {
        const lines = wrapHanging(input.replaceAll('\n', ' '), width, '  - ', '    ');
        for (const line of lines) expect(widthOf(line)).toBeLessThanOrEqual(width);
        lines.slice(1).forEach((line) => expect(line === '' || line.startsWith('    ')).toBe(true));
      }),
    );
  });
});

describe('factList', () => {
  const ctx = viewContext({ width: 40, color: false, all: false });

  it('leaves out null and empty facts and lines the values up', () => {
    expect(factList(ctx, [['city', 'Sydney'], ['zip', null], ['organization', ''], ['AS', 'AS13335']])).toBe('city  Sydney\nAS    AS13335\n');
  });

  it('wraps a long value beside its label with a hanging indent', () => {
    const out = factList(ctx, [['record', 'v=spf1 ip4:192.0.2.0/24 include:_spf.example.com include:_spf.google.com -all']]);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe('record  v=spf1 ip4:192.0.2.0/24');
    for (const line of lines) expect(widthOf(line)).toBeLessThanOrEqual(40);
    for (const line of lines.slice(1)) expect(line.startsWith('          ')).toBe(true);
    expect(words(out)).toEqual(['record', ...words('v=spf1 ip4:192.0.2.0/24 include:_spf.example.com include:_spf.google.com -all')]);
  });

  it('shows control characters from the network as visible escapes', () => {
    expect(factList(ctx, [['banner', '220 evil\u001b]0;pwned\u0007 ESMTP']])).toBe('banner  220 evil\\x1b]0;pwned\\x07 ESMTP\n');
  });
});

describe('findingsBlock', () => {
  it('groups by severity, errors first, and wraps each message at the width', () => {
    const ctx = viewContext({ width: 50, color: false, all: false });
    const out = findingsBlock(ctx, [
      { id: 'b_info', severity: 'info', message: 'a note', rfc: null },
      { id: 'a_error', severity: 'error', message: 'the MX host resolves to a loopback address that other networks cannot reach', rfc: 'RFC 6890' },
      { id: 'c_pass', severity: 'pass', message: 'fine', rfc: null },
    ]);
    expect(out).toBe(
      [
        '1 error',
        '  - the MX host resolves to a loopback address',
        '    that other networks cannot reach [a_error, RFC',
        '    6890]',
        '1 note',
        '  - a note [b_info]',
        '1 check passed',
        '  c_pass',
        '',
      ].join('\n'),
    );
  });

  it('colours the severity words when colour is on', () => {
    const out = findingsBlock(viewContext({ width: 50, color: true, all: false }), [{ id: 'x', severity: 'error', message: 'bad', rfc: null }]);
    expect(out).toContain('\u001b[31m');
    expect(stripAnsi(out)).toBe('1 error\n  - bad [x]\n');
  });
});

describe('fitColumns and fittedTable', () => {
  const column = fc.record({ header: fc.constantFrom('ip', 'location', 'organization', 'AS'), priority: fc.integer({ min: 0, max: 5 }), wrap: fc.boolean() });

  it('fits the width, or gives null only when the columns that must stay cannot fit', () => {
    fc.assert(
      fc.property(fc.array(column, { minLength: 1, maxLength: 6 }), fc.array(fc.array(text.map((cell) => cell.replaceAll('\n', ' ').trim()), { minLength: 6, maxLength: 6 }), { minLength: 1, maxLength: 5 }), fc.integer({ min: 20, max: 140 }), (columns, rows, width) => {
        const ctx = viewContext({ width, color: false, all: false });
        const table = fittedTable(ctx, columns as TableColumn[], rows.map((cells) => ({ cells: cells.slice(0, columns.length) })));
        if (table === null) {
          // Null when no column has a value (the caller shows the records as blocks)...
          if (rows.every((cells) => cells.slice(0, columns.length).every((cell) => cell === ''))) return;
          // ...or when even the columns that must stay, at their narrowest, are wider than the width.
          const filled = columns.map((_, index) => rows.some((cells) => (cells[index] ?? '') !== ''));
          fc.pre(filled.every(Boolean));
          const natural = columns.map((item, index) => Math.max(stringWidth(item.header), ...rows.map((cells) => stringWidth(cells[index] ?? '')), 1));
          expect(fitColumns(columns as TableColumn[], natural, width)).toBeNull();
          return;
        }
        for (const line of table.trimEnd().split('\n')) expect(widthOf(line)).toBeLessThanOrEqual(width);
      }),
    );
  });

  it('narrows one column at a time, the widest first, as many times as the table is too wide', () => {
    /** The rule stepwise: while too wide, the widest column above its floor (the first of equals) loses one column. */
    const stepwise = (columns: readonly TableColumn[], natural: readonly number[], width: number): Map<number, number> | null => {
      const kept = columns.map((_, index) => index);
      for (;;) {
        const widths = new Map(kept.map((index) => [index, natural[index]!]));
        const total = () => [...widths.values()].reduce((sum, value) => sum + value, 0) + widths.size * 3 + 1;
        const floor = (index: number) => (columns[index]!.wrap ? Math.min(natural[index]!, Math.max(12, stringWidth(columns[index]!.header))) : natural[index]!);
        if (kept.reduce((sum, index) => sum + floor(index), 0) + kept.length * 3 + 1 <= width) {
          while (total() > width) {
            let widest = -1;
            for (const index of kept) if (widths.get(index)! > floor(index) && (widest === -1 || widths.get(index)! > widths.get(widest)!)) widest = index;
            widths.set(widest, widths.get(widest)! - 1);
          }
          return widths;
        }
        const droppable = kept.filter((index) => columns[index]!.priority > 0);
        if (droppable.length === 0 || kept.length === 1) return null;
        kept.splice(kept.indexOf(droppable.reduce((worst, index) => (columns[index]!.priority >= columns[worst]!.priority ? index : worst))), 1);
      }
    };
    fc.assert(
      fc.property(fc.array(fc.tuple(column, fc.integer({ min: 1, max: 400 })), { minLength: 1, maxLength: 6 }), fc.integer({ min: 20, max: 300 }), (pairs, width) => {
        const columns = pairs.map(([item]) => item as TableColumn);
        const natural = pairs.map(([item, cells]) => Math.max(cells, stringWidth(item.header)));
        expect(fitColumns(columns, natural, width)).toEqual(stepwise(columns, natural, width));
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps every column when the table fits, drops the lowest priority first when it does not', () => {
    const columns: TableColumn[] = [
      { header: 'ip', priority: 0 },
      { header: 'city', priority: 1 },
      { header: 'note', priority: 2 },
    ];
    const row = { cells: ['192.0.2.1', 'Mountain View', 'a note that is long'] };
    const wide = fittedTable(viewContext({ width: 80, color: false, all: false }), columns, [row])!;
    expect(wide).toContain('a note that is long');
    const narrow = fittedTable(viewContext({ width: 30, color: false, all: false }), columns, [row])!;
    expect(narrow).not.toContain('note');
    expect(narrow).toContain('Mountain View');
    expect(fittedTable(viewContext({ width: 20, color: false, all: false }), [{ header: 'ip', priority: 0 }, { header: 'city', priority: 0 }], [row])).toBeNull();
  });

  it('narrows a wrapped column before leaving any out', () => {
    const columns: TableColumn[] = [
      { header: 'ip', priority: 0 },
      { header: 'organization', priority: 1, wrap: true },
    ];
    const table = fittedTable(viewContext({ width: 30, color: false, all: false }), columns, [{ cells: ['192.0.2.1', 'Cloudflare, Inc. of San Francisco'] }])!;
    expect(words(table.replace(/[│┌┐└┘├┤┬┴┼─]/g, ' '))).toEqual(['ip', 'organization', '192.0.2.1', 'Cloudflare,', 'Inc.', 'of', 'San', 'Francisco']);
  });

  it('leaves out a column no row has a value in', () => {
    const table = fittedTable(viewContext({ width: 80, color: false, all: false }), [{ header: 'ip', priority: 0 }, { header: 'flags', priority: 1 }], [{ cells: ['192.0.2.1', ''] }])!;
    expect(table).not.toContain('flags');
  });
});

/**
 * Long text without a space (a TXT record, a DKIM key, a banner of one
 * token): mixed widths, marks and joiners, and controls escaped as the views
 * escape them. Correctness only; bench/human-view.js measures the time.
 */
describe('long text without spaces', () => {
  const piece = fc.oneof(
    { arbitrary: fc.constantFrom('a', 'Z', '0', '=', '/', '+', '"', '\\', '.', '~'), weight: 6 },
    { arbitrary: fc.constantFrom('漢', '字', '한', 'Ａ', 'ｱ', '中'), weight: 3 },
    // Combining marks (on what precedes them, or first of the text), an enclosing mark, a spacing mark.
    { arbitrary: fc.constantFrom('\u0301', '\u0308', '\u0951', '\u20dd', '\u302a', '\u093e'), weight: 2 },
    // Emoji: presentation, a skin tone, a joined sequence, a flag, a lone regional indicator, a keycap, a lone joiner.
    { arbitrary: fc.constantFrom('😀', '👍🏻', '👩‍🚀', '🇯🇵', '🇯', '❤️', '1️⃣', '\u200d'), weight: 2 },
    // Controls and bidi overrides, shown as visible escapes.
    { arbitrary: fc.constantFrom('\u0000', '\u0007', '\u001b', '\u009b', '\u202e', '\t', '\r', '\u007f'), weight: 1 },
  );
  const unbreakable = (maxLength: number) => fc.array(piece, { minLength: 1, maxLength }).map((pieces) => safe(pieces.join('')));
  /** Offsets of the grapheme cluster boundaries of a text (Intl.Segmenter, the reference). */
  const boundaries = (text: string) => new Set([...new Intl.Segmenter().segment(text)].map((segment) => segment.index).concat(text.length));
  const firstCluster = (text: string) => new Intl.Segmenter().segment(text)[Symbol.iterator]().next().value!.segment;

  it('wraps into lines that fit the width, broken between grapheme clusters, keeping every character in order', () => {
    fc.assert(
      fc.property(unbreakable(1000), fc.integer({ min: 2, max: 120 }), (text, width) => {
        const lines = wrapText(text, width);
        // Nothing lost, nothing added, nothing repeated, in order.
        expect(lines.join('')).toBe(text);
        const cuts = boundaries(text);
        let offset = 0;
        lines.forEach((line, index) => {
          expect(line).not.toBe('');
          expect(displayWidth(line)).toBeLessThanOrEqual(width);
          offset += line.length;
          expect(cuts.has(offset)).toBe(true);
          // A line ends early only when the next cluster would not fit on it.
          const next = lines[index + 1];
          if (next !== undefined && displayWidth(line) < width) expect(displayWidth(line) + displayWidth(firstCluster(next))).toBeGreaterThan(width);
        });
      }),
      { numRuns: 150 },
    );
  });

  it('fits the width as string-width measures each line, for text it measures cluster by cluster alike', () => {
    const simple = fc.array(fc.constantFrom('a', '=', '漢', 'ｱ', 'e\u0301', '😀', '\u001b'), { minLength: 1, maxLength: 2000 }).map((pieces) => safe(pieces.join('')));
    fc.assert(
      fc.property(simple, fc.integer({ min: 2, max: 120 }), (text, width) => {
        const lines = wrapText(text, width);
        expect(lines.join('')).toBe(text);
        for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(width);
      }),
      { numRuns: 100 },
    );
  });

  it('keeps a fact value whole beside its label, every line within the width', () => {
    fc.assert(
      fc.property(unbreakable(600), fc.integer({ min: 20, max: 120 }), (value, width) => {
        const lines = factList(viewContext({ width, color: false, all: false }), [['record', value]]).trimEnd().split('\n');
        for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(width);
        expect(lines[0]!.startsWith('record  ')).toBe(true);
        expect(lines.map((line, index) => line.slice(index === 0 ? 'record  '.length : 'record    '.length)).join('')).toBe(value);
      }),
      { numRuns: 100 },
    );
  });

  it('keeps a table cell whole, the borders of every line in line', () => {
    fc.assert(
      fc.property(unbreakable(600), fc.integer({ min: 26, max: 120 }), (value, width) => {
        const columns: TableColumn[] = [
          { header: 'name', priority: 0 },
          { header: 'data', priority: 0, wrap: true },
        ];
        const lines = fittedTable(viewContext({ width, color: false, all: false }), columns, [{ cells: ['a.test', value] }])!.trimEnd().split('\n');
        const tableWidth = displayWidth(lines[0]!);
        expect(tableWidth).toBeLessThanOrEqual(width);
        for (const line of lines) expect(displayWidth(line)).toBe(tableWidth);
        const cell = lines.slice(3, -1).map((line) => line.split('│')[2]!.slice(1).trimEnd());
        expect(cell.join('')).toBe(value);
      }),
      { numRuns: 100 },
    );
  });

  /** A TXT answer of `count` character strings of `size` bytes each (the last shorter), no space in them. */
  function txtRecord(strings: readonly string[], records = 1): DnsResult {
    const answers = Array.from({ length: records }, () => ({ name: 'big.test', type: 'TXT' as const, ttl_seconds: 300, data: { strings: [...strings] } }));
    return { kind: 'dns', target: 'big.test', domain: 'big.test', domain_unicode: 'big.test', type: 'TXT', status: 'noerror', rcode: 'NOERROR', answers, resolver: '127.0.0.1:53', transport: 'tcp', latency_ms: 1 } as unknown as DnsResult;
  }
  /** The data of the dns view's answer list, its lines joined, spaces left out: beside the name, type and TTL, or under each record when the width leaves it too little room. */
  function dataColumn(view: string): string {
    const lines = view.split('\n');
    const start = lines.findIndex((line) => line.startsWith('name '));
    const end = lines.findIndex((line, index) => index > start && line === '');
    const under = lines[start + 1] === '    data';
    const body = lines.slice(under ? start + 2 : start + 1, end);
    const offset = lines[start]!.indexOf('data');
    return (under ? body.filter((line) => line.startsWith('    ')).map((line) => line.slice(4)) : body.map((line) => line.slice(offset)))
      .join('')
      .replaceAll(' ', '');
  }

  it('shows every byte of a TXT answer of long strings in the dns view, in order, within the width', async () => {
    const txtString = fc.array(fc.oneof(fc.constantFrom('a', 'Z', '=', '/', '"', '\\'), fc.constantFrom('é', '漢', '😀', '\u0000', '\u001b')), { minLength: 1, maxLength: 255 }).map((chars) => chars.join(''));
    await fc.assert(
      fc.asyncProperty(fc.array(txtString, { minLength: 1, maxLength: 12 }), fc.integer({ min: 40, max: 160 }), async (strings, width) => {
        const view = await render(DNS_SCHEMA, 'table', [ok('big.test', txtRecord(strings))], { single: true, width });
        for (const line of view.trimEnd().split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(width);
        expect(dataColumn(view)).toBe(presentDnsData('TXT', { strings }).replaceAll(' ', ''));
      }),
      { numRuns: 40 },
    );
  });

  it('shows each answer of the dns view on one line under a header, no rules, the resolver and the query time once', async () => {
    const answers = [
      ...Array.from({ length: 10 }, (_, i) => ({ name: 'probe.example', type: 'A', ttl_seconds: 300, data: `192.0.2.${i + 1}` })),
      { name: 'probe.example', type: 'MX', ttl_seconds: 3600, data: { preference: 10, exchange: 'mx.probe.example' } },
      { name: 'probe.example', type: 'TXT', ttl_seconds: 60, data: { strings: ['v=spf1 ' + 'include:spf.example.net '.repeat(6) + '-all'] } },
    ];
    const record = { ...(txtRecord(['x']) as unknown as Record<string, unknown>), target: 'probe.example', domain: 'probe.example', domain_unicode: 'probe.example', type: 'A', answers, latency_ms: 7 };
    const view = await render(DNS_SCHEMA, 'table', [ok('probe.example', record)], { single: true, width: 80 });
    const lines = view.trimEnd().split('\n');
    expect(view).not.toMatch(/[│┌├└─]/);
    expect(lines[2]).toBe('name           type   TTL  data');
    expect(lines[3]).toBe('probe.example  A      300  192.0.2.1');
    expect(lines[13]).toBe('probe.example  MX    3600  10 mx.probe.example.');
    // The long TXT record wraps under its own column.
    expect(lines[14]).toMatch(/^probe\.example  TXT     60  "v=spf1 include:spf\.example\.net/);
    expect(lines[15]).toMatch(/^ {27}\S/);
    expect(lines.filter((line) => line.startsWith('resolver'))).toEqual(['resolver  127.0.0.1:53 (tcp), 7 ms']);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(80);
  });

  it('keeps every line of the dns view within the width, whatever the length of the names', async () => {
    const label = fc.stringMatching(/^[a-z0-9-]{1,40}$/);
    await fc.assert(
      fc.asyncProperty(fc.array(label, { minLength: 1, maxLength: 4 }), fc.integer({ min: 20, max: 120 }), async (labels, width) => {
        const name = `${labels.join('.')}.test`;
        const record = { ...(txtRecord(['some text', 'more']) as unknown as Record<string, unknown>), answers: [{ name, type: 'CNAME', ttl_seconds: 86400, data: `${name}.cdn` }, { name: `${name}.cdn`, type: 'TXT', ttl_seconds: 5, data: { strings: ['a b c '.repeat(30)] } }] };
        const view = await render(DNS_SCHEMA, 'table', [ok(name, record)], { single: true, width });
        for (const line of view.trimEnd().split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(width);
      }),
      { numRuns: 60 },
    );
  });

  it('shows a 64 KB TXT answer and 63 answers of 1 KB whole, each line within the width', async () => {
    const run = (bytes: number, seed: number) => Array.from({ length: Math.ceil(bytes / 255) }, (_, i) => String.fromCharCode(97 + ((seed + i) % 26)).repeat(Math.min(255, bytes - i * 255)));
    for (const [strings, records] of [
      [run(64_000, 0), 1],
      [run(1_000, 3), 63],
    ] as const) {
      const view = await render(DNS_SCHEMA, 'table', [ok('big.test', txtRecord(strings, records))], { single: true, width: 80 });
      for (const line of view.trimEnd().split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(80);
      expect(dataColumn(view)).toBe(presentDnsData('TXT', { strings }).replaceAll(' ', '').repeat(records));
    }
  });
});
