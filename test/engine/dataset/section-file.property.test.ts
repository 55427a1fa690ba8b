/**
 * The section file of the compiled datasets, written and read back: every
 * format, section and string table round-trips, and a file cut short or
 * with bytes changed is refused with the format's own error, never a crash.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetintelError } from '../../../src/errors.js';
import { dataFileOfBytes, openDataFile, type DataFile } from '../../../src/engine/dataset/data-file-reader.js';
import {
  decodeSectionHeader,
  headerBytes,
  SECTION_ALIGNMENT,
  SectionReader,
  startSectionFile,
  StringTable,
  type SectionFileFormat,
  type SectionFileHeader,
} from '../../../src/engine/dataset/section-file.js';
import { AsnIndex } from '../../../src/engine/asn/asn-index.js';
import { compileAsnIndex } from '../../../src/engine/asn/compile-asn-index.js';
import { SignalIndex } from '../../../src/engine/security/signal-index.js';
import { tempDir } from '../../support/cli.js';
import { fuzz } from '../hostile-inputs.js';
import { compileFixtures } from '../security/fixtures.js';

const scratch = tempDir('netintel-section-file-');
afterAll(() => scratch.remove());

/** The error a reader of the test format throws, told apart from any other exception. */
class CorruptFile extends Error {}

const PROBLEMS: SectionFileFormat['problems'] = {
  tooShort: 'too short',
  wrongMagic: 'wrong magic',
  version: (found, expected) => `version ${found}, not ${expected}`,
  fileLength: (actual, said) => `${actual} bytes, header says ${said}`,
};

/** A format: its magic, version, sections, and the section file's own fields mixed in any order with a few counts of its own. */
const formats: fc.Arbitrary<SectionFileFormat> = fc
  .record({
    magic: fc.uint8Array({ minLength: 8, maxLength: 8 }),
    version: fc.nat(),
    sectionCount: fc.integer({ min: 1, max: 8 }),
    extra: fc.subarray(['headerBytes', 'zero', 'count0', 'count1', 'count2']),
    order: fc.infiniteStream(fc.double({ min: 0, max: 1, noNaN: true })),
    padEnd: fc.boolean(),
  })
  .map(({ magic, version, sectionCount, extra, order, padEnd }) => {
    const names = ['version', 'sectionCount', 'fileBytes', ...extra];
    const keys = names.map((name) => ({ name, key: order.next().value as number }));
    const fields = keys.sort((a, b) => a.key - b.key).map((item) => item.name);
    return { magic, version, sectionCount, fields, padEnd, problems: PROBLEMS };
  });

/** A format and the contents of each of its sections. */
const files = formats.chain((format) =>
  fc.record({
    format: fc.constant(format),
    sections: fc.array(fc.uint8Array({ maxLength: 48 }), { minLength: format.sectionCount, maxLength: format.sectionCount }),
    counts: fc.record({ count0: fc.nat(), count1: fc.nat(), count2: fc.nat() }),
  }),
);

function write(format: SectionFileFormat, sections: readonly Uint8Array[], counts: Record<string, number>): Buffer {
  const file = startSectionFile(
    format,
    sections.map((bytes) => bytes.length),
    counts,
    () => new Error('too large'),
  );
  sections.forEach((bytes, section) => file.putBytes(section, bytes));
  return file.bytes;
}

function decode(format: SectionFileFormat, bytes: Uint8Array): SectionFileHeader | string {
  return decodeSectionHeader(format, bytes.subarray(0, Math.min(headerBytes(format), bytes.length)), bytes.length);
}

function readerOf(data: DataFile, header: SectionFileHeader): SectionReader {
  return new SectionReader(data, header.sections, (reason) => new CorruptFile(reason), 64);
}

/** Passes when `run` returns or throws the file's corrupt error (or a data_unavailable NetintelError); anything else fails. */
function valueOrCorrupt(run: () => unknown): void {
  try {
    run();
  } catch (error) {
    if (error instanceof CorruptFile) return;
    if (error instanceof NetintelError && error.code === 'data_unavailable') return;
    throw error;
  }
}

describe('a section file', () => {
  it('reads back its header fields and every section as written, in memory and by positioned reads', () => {
    let run = 0;
    fc.assert(
      fc.property(files, ({ format, sections, counts }) => {
        const bytes = write(format, sections, counts);
        const header = decode(format, bytes);
        if (typeof header === 'string') throw new Error(header);
        expect(header.version).toBe(format.version);
        expect(header.fileBytes).toBe(bytes.length);
        for (const name of ['count0', 'count1', 'count2'] as const) {
          if (format.fields.includes(name)) expect(header.fields[name]).toBe(counts[name]);
        }
        if (format.fields.includes('zero')) expect(header.fields['zero']).toBe(0);
        if (format.padEnd) expect(bytes.length % SECTION_ALIGNMENT).toBe(0);
        const path = join(scratch.path, `file-${run++}.bin`);
        writeFileSync(path, bytes);
        for (const data of [dataFileOfBytes('memory.bin', bytes, { kind: 'test file' }), openDataFile(path, 'pread', { kind: 'test file' })]) {
          const reader = readerOf(data, header);
          sections.forEach((expected, section) => {
            expect(header.sections[section]![0] % SECTION_ALIGNMENT).toBe(0);
            expect(new Uint8Array(reader.read(section, 0, expected.length))).toEqual(expected);
            expect(() => reader.read(section, 0, expected.length + 1)).toThrow(CorruptFile);
            expect(() => reader.read(section, -1, 1)).toThrow(CorruptFile);
          });
          data.close();
        }
      }),
      fuzz(300),
    );
  });

  it('stores each string of a table once and reads every one back', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 40 }), (texts) => {
        const table = new StringTable();
        const ids = texts.map((text) => table.id(text));
        expect(table.texts).toEqual([...new Set(texts)]);
        texts.forEach((text, i) => expect(table.texts[ids[i]!]).toBe(text));
        const strings = table.encode();
        const format: SectionFileFormat = { magic: Buffer.from('STRTABLE'), version: 1, sectionCount: 2, fields: ['version', 'sectionCount', 'fileBytes'], padEnd: true, problems: PROBLEMS };
        const file = startSectionFile(format, [4 * strings.offsets.length, strings.data.length], {}, () => new Error('too large'));
        file.putStrings(0, 1, strings);
        const header = decode(format, file.bytes);
        if (typeof header === 'string') throw new Error(header);
        const reader = readerOf(dataFileOfBytes('strings.bin', file.bytes, { kind: 'test file' }), header);
        table.texts.forEach((text, id) => {
          const [from, to] = reader.stringBounds(0, id);
          expect(reader.read(1, from, to - from).toString('utf8')).toBe(text);
        });
      }),
      fuzz(300),
    );
  });

  it('refuses a file cut short, whatever the cut, with the format\'s words', () => {
    fc.assert(
      fc.property(
        files,
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        ({ format, sections, counts }, keep) => {
          const bytes = write(format, sections, counts);
          const cut = bytes.subarray(0, Math.floor(keep * bytes.length));
          const problem = decode(format, cut);
          expect(typeof problem).toBe('string');
          expect([PROBLEMS.tooShort, PROBLEMS.fileLength(cut.length, bytes.length)]).toContain(problem);
        },
      ),
      fuzz(300),
    );
  });

  it('refuses or reads within bounds a file with bytes changed, never throwing anything but its error', () => {
    fc.assert(
      fc.property(files, fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 6 }), ({ format, sections, counts }, changes) => {
        const bytes = write(format, sections, counts);
        for (const { at, value } of changes) bytes[at % bytes.length] = value;
        const header = decode(format, bytes);
        if (typeof header === 'string') return;
        const reader = readerOf(dataFileOfBytes('changed.bin', bytes, { kind: 'test file' }), header);
        header.sections.forEach(([offset, byteLength], section) => {
          expect(offset + byteLength).toBeLessThanOrEqual(bytes.length);
          valueOrCorrupt(() => reader.read(section, 0, byteLength));
          valueOrCorrupt(() => reader.upperBoundU32(section, 0, Math.floor(byteLength / 4), 1_000));
          valueOrCorrupt(() => reader.stringBounds(section, 0));
        });
      }),
      fuzz(500),
    );
  });
});

describe('the signal index over a changed or cut file', () => {
  const good = Buffer.from(compileFixtures());

  it('opens and verifies, or refuses with data_unavailable: never another exception', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(), { nil: null }),
        (changes, cut) => {
          const bytes = Buffer.from(good);
          for (const { at, value } of changes) bytes[at % bytes.length] = value;
          const file = cut === null ? bytes : bytes.subarray(0, cut % bytes.length);
          valueOrCorrupt(() => {
            const index = SignalIndex.fromBytes('changed.idx', file);
            try {
              index.verify();
            } finally {
              index.close();
            }
          });
        },
      ),
      fuzz(500),
    );
  });
});

describe('the ASN index over a changed or cut file', () => {
  let good: Buffer;

  beforeAll(async () => {
    const v4Csv = join(scratch.path, 'asn-ipv4.csv');
    const v6Csv = join(scratch.path, 'asn-ipv6.csv');
    writeFileSync(v4Csv, ['1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."', '1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd', '8.8.8.0,8.8.8.255,15169,Google LLC', ''].join('\n'));
    writeFileSync(v6Csv, ['2001:db8::1,2001:db8::ff,64505,"Doc, Net"', '2606:4700::,2606:4700:ffff:ffff:ffff:ffff:ffff:ffff,13335,"Cloudflare, Inc."', ''].join('\n'));
    const outFile = join(scratch.path, 'asn.idx');
    await compileAsnIndex({ v4Csv, v6Csv, outFile, source: 'fixture', sourceVersion: '1', minRanges: { v4: 1, v6: 1 } });
    good = readFileSync(outFile);
  });

  it('opens, verifies and looks up, or refuses with data_unavailable, in both modes: never another exception', () => {
    let run = 0;
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(), { nil: null }),
        (changes, cut) => {
          const bytes = Buffer.from(good);
          // Half of the changes land in the header and section table, where a change is most likely to be read.
          changes.forEach(({ at, value }, i) => (bytes[at % (i % 2 === 0 ? 256 : bytes.length)] = value));
          const path = join(scratch.path, `changed-${run++}.idx`);
          writeFileSync(path, cut === null ? bytes : bytes.subarray(0, cut % bytes.length));
          for (const mode of ['pread', 'memory'] as const) {
            valueOrCorrupt(() => {
              const index = AsnIndex.open(path, { mode });
              try {
                index.verify();
                index.find(Uint8Array.of(8, 8, 8, 8));
                index.find(Uint8Array.of(0x26, 0x06, 0x47, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1));
                index.prefixesOf(13335);
              } finally {
                index.close();
              }
            });
          }
        },
      ),
      fuzz(150),
    );
  });
});
