import fc from 'fast-check';
import stripAnsi from 'strip-ansi';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { factList, findingsBlock } from '../../src/output/human/blocks.js';
import { fitColumns, fittedTable, type TableColumn } from '../../src/output/human/fitted-table.js';
import { viewContext } from '../../src/output/human/style.js';
import { wrapHanging, wrapText } from '../../src/output/human/wrap.js';

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
