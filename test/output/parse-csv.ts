/** A strict RFC 4180 reader (quoted fields may hold commas, quotes doubled, CR and LF), for round trips. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"' && cell === '') {
      i += 1;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        cell += text[i++];
      }
      if (i < text.length && text[i] !== ',' && text[i] !== '\n') throw new Error(`text after a closing quote at ${i}`);
      continue;
    }
    const char = text[i++]!;
    if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else {
      if (char === '"' || char === '\r') throw new Error(`bare ${JSON.stringify(char)} in an unquoted field at ${i - 1}`);
      cell += char;
    }
  }
  if (cell !== '' || row.length > 0) throw new Error('the last row has no line ending');
  return rows;
}
