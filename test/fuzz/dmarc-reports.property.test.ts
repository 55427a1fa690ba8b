/**
 * Property-based tests of the DMARC report reader on hostile files: whatever
 * the bytes (truncated, flipped, of the wrong kind, with entities or giant
 * attributes, in any container), a file gives rows or one failure naming
 * it, never an exception, and the next file is read as usual.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngineContext } from '../../src/engine/context.js';
import { parseAggregateReport } from '../../src/engine/dmarc/aggregate-report.js';
import { reportDocuments, REPORT_LIMITS } from '../../src/engine/dmarc/report-containers.js';
import { createReportReader } from '../../src/engine/dmarc/report-files.js';
import { NetintelError } from '../../src/errors.js';
import { fuzz } from '../engine/hostile-inputs.js';
import { gzipped, mbox, reportMessage, reportXml, zipped, type GeneratedReport } from '../support/dmarc-reports.js';

const ctx = createEngineContext();
const limits = { ...REPORT_LIMITS, inflatedBytes: 256 * 1024, fileBytes: 512 * 1024 };

const generatedReport: fc.Arbitrary<GeneratedReport> = fc.record({
  org: fc.constantFrom('google.com', 'Yahoo', 'mail.example.net'),
  id: fc.stringMatching(/^[A-Za-z0-9.-]{1,20}$/),
  domain: fc.constantFrom('example.com', 'example.org'),
  format: fc.constantFrom('rfc7489' as const, 'dmarcbis' as const),
  records: fc.array(
    fc.record({
      ip: fc.oneof(fc.ipV4(), fc.ipV6()),
      count: fc.nat(100_000),
      dkim: fc.constantFrom('pass' as const, 'fail' as const),
      spf: fc.constantFrom('pass' as const, 'fail' as const),
    }),
    { maxLength: 5 },
  ),
});

type Container = (xml: string) => Buffer;
const containers: Record<string, Container> = {
  xml: (xml) => Buffer.from(xml),
  gzip: gzipped,
  zip: (xml) => zipped({ 'report.xml': xml }),
  eml: (xml) => Buffer.from(reportMessage(gzipped(xml), 'report.xml.gz')),
  mbox: (xml) => Buffer.from(mbox([reportMessage(Buffer.from(xml), 'a.xml'), reportMessage(zipped({ 'b.xml': xml }), 'b.zip')])),
};

/** A hostile variant of a file's bytes. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('flip' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('magic' as const), head: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('entities' as const) }),
  fc.record({ kind: fc.constant('attribute' as const), size: fc.integer({ min: 1000, max: 200_000 }) }),
  fc.record({ kind: fc.constant('bomb' as const), size: fc.integer({ min: 300 * 1024, max: 2 * 1024 * 1024 }) }),
  fc.record({ kind: fc.constant('none' as const) }),
);

function mutateXml(xml: string, change: { kind: string; size?: number }): string {
  if (change.kind === 'entities') return xml.replace('<feedback', '<!DOCTYPE f [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>\n<feedback').replace('<org_name>', '<org_name>&b;');
  if (change.kind === 'attribute') return xml.replace('<feedback', `<feedback data-x="${'x'.repeat(change.size ?? 0)}"`);
  return xml;
}

function mutateBytes(bytes: Buffer, change: { kind: string; at?: number; byte?: number; head?: Uint8Array; size?: number }, container: string): Buffer {
  // A decompression bomb in the file's own container: zeros past the cap on inflated bytes after a report's start.
  if (change.kind === 'bomb') return containers[container === 'xml' ? 'gzip' : container]!(`<feedback>${'\0'.repeat(change.size!)}`);
  if (change.kind === 'truncate') return bytes.subarray(0, Math.floor(bytes.length * change.at!));
  if (change.kind === 'flip') {
    const copy = Buffer.from(bytes);
    if (copy.length > 0) copy[Math.min(copy.length - 1, Math.floor(copy.length * change.at!))] = change.byte!;
    return copy;
  }
  if (change.kind === 'magic') return Buffer.concat([Buffer.from(change.head!), bytes.subarray(change.head!.length)]);
  return bytes;
}

describe('the DMARC report reader on hostile files', () => {
  it('gives rows or one invalid_input failure naming the file, in every container, and reads the next file', async () => {
    await fc.assert(
      fc.asyncProperty(generatedReport, fc.constantFrom(...Object.keys(containers)), mutation, async (report, container, change) => {
        const read = createReportReader(ctx, { reverseDns: false, limits });
        const bytes = mutateBytes(containers[container]!(mutateXml(reportXml(report), change)), change as { kind: string }, container);
        const outcomes = await read('hostile.file', bytes);
        for (const outcome of outcomes) {
          expect(outcome.query).toBe('hostile.file');
          if (!outcome.ok) {
            expect(outcome.error).toBeInstanceOf(NetintelError);
            expect(outcome.error.code).toBe('invalid_input');
            expect(outcome.error.message).toMatch(/^hostile\.file/);
          }
        }
        if (change.kind === 'entities' || change.kind === 'bomb') expect(outcomes).toEqual([expect.objectContaining({ ok: false })]);
        const next = await read('good.xml', Buffer.from(reportXml({ ...report, id: `${report.id}-next` })));
        expect(next.every((outcome) => outcome.ok)).toBe(true);
        expect(next).toHaveLength(report.records.length);
      }),
      fuzz(300),
    );
  });

  it('parses any text to a report or throws invalid_input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), generatedReport.map(reportXml)), (text) => {
        try {
          parseAggregateReport(text, 'any.xml');
        } catch (error) {
          expect(error).toBeInstanceOf(NetintelError);
          expect((error as NetintelError).code).toBe('invalid_input');
        }
      }),
      fuzz(2000),
    );
  });

  it('opens any bytes as documents or throws invalid_input', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 600 }), fc.constantFrom([], [0x1f, 0x8b], [0x50, 0x4b, 0x03, 0x04], [0x3c]), async (tail, head) => {
        try {
          await reportDocuments(Buffer.from([...head, ...tail]), 'bytes.bin', limits);
        } catch (error) {
          expect(error).toBeInstanceOf(NetintelError);
          expect((error as NetintelError).code).toBe('invalid_input');
        }
      }),
      fuzz(1000),
    );
  });
});
