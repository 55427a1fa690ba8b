// Plain-text tables for the terminal.

/**
 * Formats rows as an aligned table. Columns whose header starts with a space
 * are right-aligned (numbers); the others are left-aligned.
 */
export function formatTable(headers, rows) {
  const cells = rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell))));
  const widths = headers.map((header, column) => Math.max(header.trim().length, ...cells.map((row) => row[column].length)));
  const right = headers.map((header) => header.startsWith(' '));
  const line = (row) =>
    row.map((cell, column) => (right[column] ? cell.padStart(widths[column]) : cell.padEnd(widths[column]))).join('  ').trimEnd();
  return [line(headers.map((header) => header.trim())), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n');
}

/** A number with a fixed count of decimals, or '-' when missing. */
export function fixed(value, digits = 1) {
  return value === null || value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits);
}

/** An integer with thousands separators, or '-' when missing. */
export function grouped(value) {
  return value === null || value === undefined || Number.isNaN(value) ? '-' : Math.round(value).toLocaleString('en-US');
}

/** A loud, boxed notice for something that was skipped or failed. */
export function loud(message) {
  const text = `!!! ${message}`;
  const bar = '!'.repeat(Math.min(100, text.length));
  return `${bar}\n${text}\n${bar}`;
}
