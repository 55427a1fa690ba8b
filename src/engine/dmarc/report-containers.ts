import { gunzipSync } from 'node:zlib';
import { Unzip, UnzipInflate } from 'fflate';
import { NetintelError } from '../../errors.js';

/** The caps a file of reports is read within: whatever its container says, it costs no more. */
export interface ReportLimits {
  /** The largest file read, in bytes. */
  fileBytes: number;
  /** The most bytes inflated out of one file (gzip or zip, all entries together). */
  inflatedBytes: number;
  /** The most entries of one zip archive, and attachments of one message. */
  entries: number;
  /** The most messages of one mbox file. */
  messages: number;
}

export const REPORT_LIMITS: ReportLimits = Object.freeze({
  fileBytes: 32 * 1024 * 1024,
  inflatedBytes: 64 * 1024 * 1024,
  entries: 100,
  messages: 10_000,
});

/** The XML of one report and where it was found (`reports.zip: google.com!example.com!1.xml`). */
export interface ReportDocument {
  name: string;
  xml: Buffer;
}

/** What a file is, from its first bytes (its name is not trusted). */
export type ContainerKind = 'gzip' | 'zip' | 'xml' | 'mail' | 'unknown';

export function containerKind(bytes: Uint8Array): ContainerKind {
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 0x03 || bytes[2] === 0x05) && (bytes[3] === 0x04 || bytes[3] === 0x06)) return 'zip';
  const head = Buffer.from(bytes.subarray(0, 512)).toString('latin1').replace(/^\xef\xbb\xbf/, '').trimStart();
  if (head.startsWith('<')) return 'xml';
  // An mbox file starts with its "From " line, a message with a header field (RFC 5322 §2.2).
  if (/^From /.test(head) || /^[\x21-\x39\x3b-\x7e]+:/.test(head)) return 'mail';
  return 'unknown';
}

/**
 * The report documents of one file: an XML report, a gzip or zip of them, or
 * a message or mbox whose attachments are any of these.
 *
 * `budget` is what may still be inflated (default: the per-file cap); what
 * the file inflated is taken from it, a file refused half way included.
 *
 * @throws NetintelError `invalid_input` naming the file: an unknown
 *   container, one over a cap, a truncated or corrupt archive.
 */
export async function reportDocuments(bytes: Buffer, file: string, limits: ReportLimits = REPORT_LIMITS, budget = { left: limits.inflatedBytes }): Promise<ReportDocument[]> {
  if (bytes.length > limits.fileBytes) throw invalid(file, `larger than the ${limits.fileBytes}-byte cap`);
  const kind = containerKind(bytes);
  if (kind === 'unknown') throw invalid(file, 'not a DMARC report: neither XML, gzip, zip nor a mail message (by its first bytes)');
  return distinctNames(kind === 'mail' ? await mailDocuments(bytes, file, limits, budget) : archiveDocuments(bytes, file, kind, limits, budget));
}

/**
 * The documents with a label each of their own: a second entry or attachment
 * of one name (`same.xml` twice in a zip) is `same.xml (2)`. A report's rows
 * are told from the next report's by their label (report-tally.ts), so one
 * report in two documents of one name was counted twice, not as a duplicate.
 */
function distinctNames(documents: ReportDocument[]): ReportDocument[] {
  const used = new Set<string>();
  return documents.map((document) => {
    let name = document.name;
    for (let copy = 2; used.has(name); copy++) name = `${document.name} (${copy})`;
    used.add(name);
    return name === document.name ? document : { ...document, name };
  });
}

function archiveDocuments(bytes: Buffer, name: string, kind: Exclude<ContainerKind, 'mail' | 'unknown'>, limits: ReportLimits, budget: { left: number }): ReportDocument[] {
  if (kind === 'xml') return [{ name, xml: bytes }];
  if (kind === 'gzip') return [{ name, xml: xmlOnly(gunzipWithin(bytes, name, budget), name) }];
  return unzipWithin(bytes, name, limits, budget).map((entry) => {
    const label = `${name}: ${entry.name}`;
    // A gzip inside a zip (some reporters compress twice) is opened within the same budget; nothing deeper.
    return { name: label, xml: xmlOnly(containerKind(entry.data) === 'gzip' ? gunzipWithin(entry.data, label, budget) : entry.data, label) };
  });
}

function xmlOnly(bytes: Buffer, name: string): Buffer {
  if (containerKind(bytes) !== 'xml') throw invalid(name, 'the archive holds something other than XML');
  return bytes;
}

function gunzipWithin(bytes: Buffer, name: string, budget: { left: number }): Buffer {
  try {
    const out = gunzipSync(bytes, { maxOutputLength: Math.max(1, budget.left) });
    budget.left -= out.length;
    return out;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      // It inflated all it was allowed before it was stopped.
      budget.left = 0;
      throw invalid(name, 'inflates past the cap on inflated bytes: refused as a decompression bomb');
    }
    throw invalid(name, `corrupt or truncated gzip (${(error as Error).message})`);
  }
}

/**
 * The entries of a zip archive, read with fflate's streaming Unzip in small
 * pushes: an entry whose declared size is over the budget is refused before
 * it is inflated, and the bytes actually inflated are counted as they come
 * (an archive may declare sizes it does not keep). Entry names are labels
 * only: nothing is written, so a path such as `../x` is harmless.
 */
function unzipWithin(bytes: Buffer, name: string, limits: ReportLimits, budget: { left: number }): Array<{ name: string; data: Buffer }> {
  const entries: Array<{ name: string; chunks: Uint8Array[]; done: boolean }> = [];
  let failure: NetintelError | undefined;
  let seen = 0;
  const unzip = new Unzip((file) => {
    if (failure) return;
    seen += 1;
    if (seen > limits.entries) {
      failure = invalid(name, `more than ${limits.entries} entries in the archive`);
      return;
    }
    if (file.name.endsWith('/')) return;
    if (file.originalSize !== undefined && file.originalSize > budget.left) {
      failure = invalid(name, `the entry ${JSON.stringify(file.name)} declares ${file.originalSize} bytes, over the cap on inflated bytes: refused as a decompression bomb`);
      return;
    }
    const entry = { name: file.name, chunks: [] as Uint8Array[], done: false };
    entries.push(entry);
    file.ondata = (error, data, final) => {
      if (failure) return;
      if (error) {
        failure = invalid(name, `corrupt entry ${JSON.stringify(file.name)} (${error.message})`);
        return;
      }
      budget.left -= data.length;
      if (budget.left < 0) {
        failure = invalid(name, `the entry ${JSON.stringify(file.name)} inflates past the cap on inflated bytes: refused as a decompression bomb`);
        file.terminate();
        return;
      }
      entry.chunks.push(data);
      if (final) entry.done = true;
    };
    try {
      file.start();
    } catch (error) {
      failure = invalid(name, `cannot inflate the entry ${JSON.stringify(file.name)} (${(error as Error).message})`);
    }
  });
  unzip.register(UnzipInflate);
  // Small pushes bound what one push may inflate (deflate expands at most about 1032:1).
  const step = 4096;
  try {
    for (let offset = 0; offset < bytes.length && failure === undefined; offset += step) unzip.push(bytes.subarray(offset, offset + step), offset + step >= bytes.length);
  } catch (error) {
    failure ??= invalid(name, `corrupt zip archive (${(error as Error).message})`);
  }
  if (failure) throw failure;
  const unfinished = entries.find((entry) => !entry.done);
  if (unfinished) throw invalid(name, `truncated zip archive: the entry ${JSON.stringify(unfinished.name)} ends early`);
  if (entries.length === 0) throw invalid(name, 'the zip archive holds no file');
  return entries.map((entry) => ({ name: entry.name, data: Buffer.concat(entry.chunks) }));
}

/** The reports attached to one message, or to each message of an mbox file. */
async function mailDocuments(bytes: Buffer, file: string, limits: ReportLimits, budget: { left: number }): Promise<ReportDocument[]> {
  const { simpleParser } = await import('mailparser');
  const messages = mboxMessages(bytes, file, limits);
  const documents: ReportDocument[] = [];
  for (const [index, message] of messages.entries()) {
    const label = messages.length > 1 ? `${file}: message ${index + 1}` : file;
    const parsed = await simpleParser(message, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true });
    const reports = parsed.attachments.flatMap((attachment) => {
      const kind = containerKind(attachment.content);
      return kind === 'xml' || kind === 'gzip' || kind === 'zip' ? [{ attachment, kind }] : [];
    });
    if (reports.length > limits.entries) throw invalid(label, `more than ${limits.entries} attachments`);
    for (const { attachment, kind } of reports) {
      documents.push(...archiveDocuments(attachment.content, `${label}: ${attachment.filename ?? 'attachment'}`, kind, limits, budget));
    }
  }
  if (documents.length === 0) throw invalid(file, 'a mail message without a report attached (XML, gzip or zip)');
  return documents;
}

/** An mbox file's messages, split at each "From " line that starts a message; a single message is a list of one. */
function mboxMessages(bytes: Buffer, file: string, limits: ReportLimits): Buffer[] {
  if (!(bytes[0] === 0x46 && bytes.subarray(0, 5).toString('latin1') === 'From ')) return [bytes];
  const text = bytes.toString('latin1');
  const starts: number[] = [];
  for (const match of text.matchAll(/(?:^|\n)From [^\n]*\n/g)) {
    starts.push(match.index + match[0].length);
    if (starts.length > limits.messages) throw invalid(file, `more than ${limits.messages} messages in the mbox file`);
  }
  return starts.map((start, index) => {
    const next = starts[index + 1];
    const end = next === undefined ? bytes.length : text.lastIndexOf('\nFrom ', next - 1) + 1;
    return bytes.subarray(start, end);
  });
}

function invalid(file: string, why: string): NetintelError {
  return new NetintelError('invalid_input', `${file}: ${why}`);
}
