import type { SourcedTarget } from '../bulk/read-targets.js';
import { scanLine, type AddressMatch } from '../grep/address-scanner.js';
import { eachLine } from '../grep/text-lines.js';
import type { InputCounts } from './summary-tally.js';

/**
 * The addresses of whole-line text pieces (text-lines.ts), one batch of
 * lookup targets per piece, with the lines counted into `counts`. Blank
 * lines and lines starting with `#` (comments, W3C `#Fields:` headers) are
 * skipped, as bulk skips them; every other line is scanned as `netintel
 * grep` scans it, each address in it a target. A line with no address is
 * an invalid line. A zone index (`fe80::1%eth0`) names an interface of
 * the host that logged it, not part of the address: the lookup gets the
 * address alone.
 */
export async function* addressTargets(pieces: AsyncIterable<string>, source: string | null, counts: InputCounts): AsyncGenerator<SourcedTarget[]> {
  const found: AddressMatch[] = [];
  const options = { cidr: false };
  let lineNumber = 0;
  for await (const piece of pieces) {
    const batch: SourcedTarget[] = [];
    eachLine(piece, (line) => {
      lineNumber++;
      counts.lines++;
      const trimmed = line.trimStart();
      if (trimmed === '' || trimmed.startsWith('#')) return;
      found.length = 0;
      scanLine(line, options, found);
      if (found.length === 0) {
        counts.invalidLines++;
        return;
      }
      for (const match of found) {
        if (match.version === 4) counts.ipv4++;
        else counts.ipv6++;
        const zone = match.text.indexOf('%');
        batch.push({ text: zone === -1 ? match.text : match.text.slice(0, zone), line: lineNumber, source });
      }
    });
    if (batch.length > 0) yield batch;
  }
}
