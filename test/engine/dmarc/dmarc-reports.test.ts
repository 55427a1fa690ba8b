import { describe, expect, it } from 'vitest';
import { createEngineContext } from '../../../src/engine/context.js';
import { parseAggregateReport } from '../../../src/engine/dmarc/aggregate-report.js';
import { containerKind, reportDocuments, REPORT_LIMITS } from '../../../src/engine/dmarc/report-containers.js';
import { summarizeDmarcReports } from '../../../src/engine/dmarc/summarize-dmarc.js';
import { gzipped, mbox, reportMessage, reportXml, zipped, type GeneratedReport } from '../../support/dmarc-reports.js';

const ctx = createEngineContext();
const offline = { reverseDns: false };

const google: GeneratedReport = {
  org: 'google.com',
  id: '1001',
  domain: 'example.com',
  records: [
    { ip: '192.0.2.10', count: 900 },
    { ip: '198.51.100.7', count: 60, dkim: 'fail', spf: 'fail', disposition: 'reject', headerFrom: 'example.com', dkimDomain: 'spoof.example', spfDomain: 'spoof.example' },
    { ip: '203.0.113.5', count: 40, dkim: 'fail', spf: 'pass', spfDomain: 'bounce.example.com' },
  ],
};
const bis: GeneratedReport = {
  org: 'mail.example.net',
  id: 'bis-7',
  domain: 'example.com',
  format: 'dmarcbis',
  records: [
    { ip: '203.0.113.5', count: 10, dkim: 'fail', spf: 'fail', disposition: 'none', reasons: ['forwarded'] },
    { ip: '2001:db8::25', count: 5 },
  ],
};

describe('parseAggregateReport', () => {
  it('reads an RFC 7489 report: metadata, policy and records', () => {
    const report = parseAggregateReport(reportXml(google), 'google.xml');
    expect(report).toMatchObject({ format: 'rfc7489', org_name: 'google.com', report_id: '1001', begin: '2026-01-01T00:00:00Z', end: '2026-01-01T23:59:59Z' });
    expect(report.policy).toEqual({ domain: 'example.com', p: 'reject', sp: 'reject', np: null, adkim: 'r', aspf: 'r', pct: 100 });
    expect(report.records.map((record) => [record.source_ip, record.count, record.disposition])).toEqual([
      ['192.0.2.10', 900, 'none'],
      ['198.51.100.7', 60, 'reject'],
      ['203.0.113.5', 40, 'none'],
    ]);
  });

  it('reads a DMARCbis report, namespace, np and reasons included', () => {
    const report = parseAggregateReport(reportXml(bis), 'bis.xml');
    expect(report.format).toBe('dmarcbis');
    expect(report.policy.np).toBe('reject');
    expect(report.records[0]!.reasons).toEqual([{ type: 'forwarded', comment: 'seen' }]);
    expect(report.records[0]!.envelope_from).toBe('example.com');
  });

  it('reads a verdict in any case, keeps another word as written, and makes up no "fail" for a missing one', () => {
    const upper = parseAggregateReport(reportXml(google).replace('<dkim>pass</dkim><spf>pass</spf>', '<dkim>PASS</dkim><spf>Fail</spf>'), 'upper.xml');
    expect(upper.records[0]).toMatchObject({ dkim: 'pass', spf: 'fail' });
    const other = parseAggregateReport(reportXml(google).replace('<dkim>pass</dkim><spf>pass</spf>', '<dkim>none</dkim>'), 'none.xml');
    // The file is read whole: one record's odd verdict does not lose the others.
    expect(other.records).toHaveLength(3);
    expect(other.records[0]).toMatchObject({ dkim: 'none', spf: 'none' });
  });

  it('refuses a date_range that ends before it begins', () => {
    const xml = reportXml(google).replace(/<begin>(\d+)<\/begin><end>(\d+)<\/end>/, '<begin>$2</begin><end>$1</end>');
    expect(() => parseAggregateReport(xml, 'backwards.xml')).toThrow(/backwards\.xml: the date_range ends \(.*\) before it begins/);
  });

  it('refuses a DOCTYPE with entities (an XML bomb) without expanding it', () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><feedback>&lol2;</feedback>`;
    expect(() => parseAggregateReport(bomb, 'bomb.xml')).toThrow(/bomb\.xml: the XML declares a DOCTYPE/);
  });

  it('refuses truncated XML and XML that is not a report, naming the file', () => {
    const text = reportXml(google);
    expect(() => parseAggregateReport(text.slice(0, text.length / 2), 'cut.xml')).toThrow(/cut\.xml: malformed XML/);
    expect(() => parseAggregateReport('<rss><channel/></rss>', 'rss.xml')).toThrow(/rss\.xml: the XML is not an aggregate report/);
  });
});

describe('reportDocuments', () => {
  const xml = reportXml(google);

  it('tells the container by its first bytes, not its name', async () => {
    expect(containerKind(gzipped(xml))).toBe('gzip');
    expect(containerKind(zipped({ 'a.xml': xml }))).toBe('zip');
    expect(containerKind(Buffer.from(`\ufeff  ${xml}`))).toBe('xml');
    expect(containerKind(Buffer.from(reportMessage(Buffer.from(xml), 'r.xml')))).toBe('mail');
    expect(containerKind(Buffer.from('\x89PNG\r\n'))).toBe('unknown');
    const documents = await reportDocuments(gzipped(xml), 'named.zip');
    expect(documents.map((document) => document.xml.toString())).toEqual([xml]);
  });

  it('reads zip entries, message attachments and every message of an mbox', async () => {
    expect((await reportDocuments(zipped({ 'one.xml': xml, 'two.xml.gz': gzipped(reportXml(bis)) }), 'r.zip')).map((document) => [document.name, document.xml.toString()])).toEqual([
      ['r.zip: one.xml', xml],
      ['r.zip: two.xml.gz', reportXml(bis)],
    ]);
    await expect(reportDocuments(zipped({ 'inner.zip': zipped({ 'a.xml': xml }) }), 'nested.zip')).rejects.toThrow(/nested\.zip: inner\.zip: the archive holds something other than XML/);
    const messages = [reportMessage(gzipped(xml), 'a.xml.gz'), reportMessage(zipped({ 'b.xml': reportXml(bis) }), 'b.zip'), reportMessage(Buffer.from(xml), 'c.xml')];
    const documents = await reportDocuments(Buffer.from(mbox(messages)), 'inbox.mbox');
    expect(documents.map((document) => document.name)).toEqual(['inbox.mbox: message 1: a.xml.gz', 'inbox.mbox: message 2: b.zip: b.xml', 'inbox.mbox: message 3: c.xml']);
    expect(documents[1]!.xml.toString()).toBe(reportXml(bis));
  });

  it('refuses a gzip bomb and a zip bomb by the bytes inflated, and a zip that lies about its sizes', async () => {
    const limits = { ...REPORT_LIMITS, inflatedBytes: 1024 * 1024 };
    const zeros = Buffer.alloc(4 * 1024 * 1024);
    await expect(reportDocuments(gzipped(zeros.toString()), 'bomb.gz', limits)).rejects.toThrow(/bomb\.gz: inflates past the cap/);
    await expect(reportDocuments(zipped({ 'big.xml': zeros }), 'bomb.zip', limits)).rejects.toThrow(/declares 4194304 bytes, over the cap/);
    // The local header's declared size rewritten to 100 bytes: the inflated bytes are still counted.
    const lying = zipped({ 'big.xml': zeros });
    lying.writeUInt32LE(100, 22);
    await expect(reportDocuments(lying, 'lying.zip', limits)).rejects.toThrow(/lying\.zip: the entry "big\.xml" inflates past the cap on inflated bytes/);
  });

  it('reads a zip written as a stream (sizes only after the data) and counts what it inflates', async () => {
    const { Zip, ZipDeflate } = await import('fflate');
    const streamed = (data: Uint8Array) => {
      const parts: Uint8Array[] = [];
      const zip = new Zip((error, chunk) => {
        if (error) throw error;
        parts.push(chunk);
      });
      const entry = new ZipDeflate('report.xml');
      zip.add(entry);
      entry.push(data, true);
      zip.end();
      return Buffer.concat(parts);
    };
    const documents = await reportDocuments(streamed(Buffer.from(xml)), 'streamed.zip');
    expect(documents.map((document) => document.xml.toString())).toEqual([xml]);
    await expect(reportDocuments(streamed(Buffer.alloc(4 * 1024 * 1024)), 'streamed-bomb.zip', { ...REPORT_LIMITS, inflatedBytes: 1024 * 1024 })).rejects.toThrow(
      /streamed-bomb\.zip: the entry "report\.xml" inflates past the cap/,
    );
  });

  it('refuses a zip of too many entries and says a path-traversal name is only a label (nothing is written)', async () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, index) => [`r${index}.xml`, xml]));
    await expect(reportDocuments(zipped(many), 'many.zip')).rejects.toThrow(/more than 100 entries/);
    const documents = await reportDocuments(zipped({ '../../etc/passwd': xml }), 'traversal.zip');
    expect(documents.map((document) => document.name)).toEqual(['traversal.zip: ../../etc/passwd']);
  });

  it('refuses a file over the size cap and one of unknown kind', async () => {
    await expect(reportDocuments(Buffer.from(xml), 'huge.xml', { ...REPORT_LIMITS, fileBytes: 100 })).rejects.toThrow(/huge\.xml: larger than the 100-byte cap/);
    await expect(reportDocuments(Buffer.from([0, 1, 2, 3]), 'x.bin')).rejects.toThrow(/x\.bin: not a DMARC report/);
  });
});

describe('summarizeDmarcReports', () => {
  it('ranks failing sources by volume, lists passing ones, and says it in a headline', async () => {
    const summary = await summarizeDmarcReports(ctx, [{ name: 'google.xml', content: Buffer.from(reportXml(google)) }, { name: 'bis.xml', content: Buffer.from(reportXml(bis)) }], offline);
    expect(summary.headline).toBe('1,015 messages from 4 sources; 2 sources fail DMARC: 6.9% of volume');
    expect(summary.failing.map((source) => [source.source_ip, source.failing_messages, source.messages])).toEqual([
      ['198.51.100.7', 60, 60],
      ['203.0.113.5', 10, 50],
    ]);
    expect(summary.failing[1]!.overrides).toEqual([{ type: 'forwarded', messages: 10 }]);
    expect(summary.passing.map((source) => source.source_ip)).toEqual(['192.0.2.10', '2001:db8::25']);
    expect(summary.reporters.map((reporter) => [reporter.org_name, reporter.reports, reporter.messages])).toEqual([
      ['google.com', 1, 1000],
      ['mail.example.net', 1, 15],
    ]);
    expect(summary.findings.map((item) => item.id)).toEqual(['dmarc_failing_source', 'dmarc_partly_failing_source']);
  });

  it('counts a report read twice once, and goes on past a bad file, naming it', async () => {
    const xml = Buffer.from(reportXml(google));
    const summary = await summarizeDmarcReports(ctx, [{ name: 'a.xml', content: xml }, { name: 'broken.xml', content: Buffer.from('<feedback><report') }, { name: 'b.xml.gz', content: gzipped(xml.toString()) }], offline);
    expect(summary.messages).toBe(1000);
    expect([summary.reports, summary.duplicate_reports, summary.files, summary.files_failed]).toEqual([1, 1, 3, 1]);
    expect(summary.errors).toEqual([{ file: 'broken.xml', code: 'invalid_input', message: expect.stringMatching(/^broken\.xml: malformed XML/) }]);
    expect(summary.findings.map((item) => item.id)).toContain('dmarc_duplicate_report');
  });

  it('counts a file given twice once, and the same report twice in one mbox once', async () => {
    const xml = Buffer.from(reportXml(google));
    const twice = await summarizeDmarcReports(ctx, [{ name: 'a.xml', content: xml }, { name: 'a.xml', content: xml }], offline);
    expect([twice.messages, twice.reports, twice.duplicate_reports]).toEqual([1000, 1, 1]);
    const inbox = Buffer.from(mbox([reportMessage(xml, 'a.xml'), reportMessage(gzipped(xml.toString()), 'a.xml.gz'), reportMessage(Buffer.from(reportXml(bis)), 'b.xml')]));
    const summary = await summarizeDmarcReports(ctx, [{ name: 'inbox', content: inbox }], offline);
    expect([summary.messages, summary.reports, summary.duplicate_reports]).toEqual([1015, 2, 1]);
  });

  it('counts one report in two entries or attachments of one name once, as a duplicate', async () => {
    const xml = Buffer.from(reportXml(google));
    // fflate's zipSync takes a record of names: the stream writer puts one name twice.
    const { Zip, ZipPassThrough } = await import('fflate');
    const parts: Uint8Array[] = [];
    const zip = new Zip((error, chunk) => {
      if (error) throw error;
      parts.push(chunk);
    });
    for (let copy = 0; copy < 2; copy++) {
      const entry = new ZipPassThrough('same.xml');
      zip.add(entry);
      entry.push(xml, true);
    }
    zip.end();
    const archive = Buffer.concat(parts);
    expect((await reportDocuments(archive, 'dup.zip')).map((document) => document.name)).toEqual(['dup.zip: same.xml', 'dup.zip: same.xml (2)']);
    const zipped = await summarizeDmarcReports(ctx, [{ name: 'dup.zip', content: archive }], offline);
    expect([zipped.messages, zipped.reports, zipped.duplicate_reports]).toEqual([1000, 1, 1]);
    // A message with the report attached twice under one file name.
    const once = reportMessage(gzipped(xml.toString()), 'report.xml.gz');
    const attachment = once.slice(once.lastIndexOf('--b1\r\nContent-Type: application/gzip'), once.lastIndexOf('--b1--'));
    const twice = once.replace('--b1--', `${attachment}--b1--`);
    const mailed = await summarizeDmarcReports(ctx, [{ name: 'dup.eml', content: Buffer.from(twice) }], offline);
    expect([mailed.messages, mailed.reports, mailed.duplicate_reports]).toEqual([1000, 1, 1]);
  });

  it('keeps reports about --domain and ending after --since', async () => {
    const other = { ...google, id: '2', domain: 'other.example', begin: 1_700_000_000, end: 1_700_086_399 };
    const files = [{ name: 'a.xml', content: Buffer.from(reportXml(google)) }, { name: 'b.xml', content: Buffer.from(reportXml(other)) }];
    expect((await summarizeDmarcReports(ctx, files, { ...offline, domain: 'other.example' })).messages).toBe(1000);
    expect((await summarizeDmarcReports(ctx, files, { ...offline, since: new Date('2025-06-01T00:00:00Z') })).domains).toEqual(['example.com']);
  });

  it('marks DKIM and SPF results aligned with the From domain (relaxed: the organisational domain)', async () => {
    const { createReportReader } = await import('../../../src/engine/dmarc/report-files.js');
    const rows = await createReportReader(ctx, offline)('g.xml', Buffer.from(reportXml(google)));
    const values = rows.flatMap((outcome) => (outcome.ok ? [outcome.value] : []));
    expect(values.map((row) => [row.dmarc, row.spf_results[0]!.aligned, row.dkim_results[0]!.aligned])).toEqual([
      ['pass', true, true],
      ['fail', false, false],
      ['pass', true, true],
    ]);
  });

  it('in strict mode (adkim=s, aspf=s) marks aligned only results of the From domain itself, not of a subdomain (RFC 7489 §3.1.1, §3.1.2)', async () => {
    const { createReportReader } = await import('../../../src/engine/dmarc/report-files.js');
    const xml = reportXml(google).replace('<adkim>r</adkim><aspf>r</aspf>', '<adkim>s</adkim><aspf>s</aspf>');
    const rows = await createReportReader(ctx, offline)('g.xml', Buffer.from(xml));
    const values = rows.flatMap((outcome) => (outcome.ok ? [outcome.value] : []));
    expect(values.map((row) => [row.spf_results[0]!.domain, row.spf_results[0]!.aligned, row.dkim_results[0]!.domain, row.dkim_results[0]!.aligned])).toEqual([
      ['example.com', true, 'example.com', true],
      ['spoof.example', false, 'spoof.example', false],
      ['bounce.example.com', false, 'example.com', true],
    ]);
  });

  it('looks up no more PTR names than its cap: the others are skipped, not "no name"', async () => {
    const { createSourceEnrichment, knownSender } = await import('../../../src/engine/dmarc/source-enrichment.js');
    const enrich = createSourceEnrichment(ctx, { reverseDns: true, maxReverseLookups: 0 });
    expect(await enrich('209.85.220.41')).toMatchObject({ ptr: null, ptr_status: 'skipped', asn: 15169, known_sender: 'Google' });
    expect(knownSender('Amazon.com, Inc.')).toBe('Amazon');
    expect(knownSender('Example Hosting GmbH')).toBeNull();
  });

  it('stops asking for PTR names after many failures in a row: the rest are unknown at once', async () => {
    const { createSourceEnrichment } = await import('../../../src/engine/dmarc/source-enrichment.js');
    const { parseResolverAddress } = await import('../../../src/engine/dns/resolver-address.js');
    const { startDnsServer } = await import('../../support/dns-server.js');
    const dns = await startDnsServer({ defaultBehaviour: 'servfail' });
    const failing = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1000, retries: 0 });
    try {
      const enrich = createSourceEnrichment(failing, { reverseDns: true });
      const addresses = Array.from({ length: 100 }, (_, index) => `192.0.2.${index + 1}`);
      for (const address of addresses) expect((await enrich(address)).ptr_status).toBe('unknown');
      expect(dns.queries.filter((query) => query.type === 'PTR')).toHaveLength(64);
    } finally {
      await failing.close();
      await dns.close();
    }
  });
});

