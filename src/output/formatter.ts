import type { HumanView } from './human/view.js';
import type { Outcome } from '../engine/outcome.js';
import type { CsvRecordWriter } from './csv-encoder.js';
import type { CsvCell } from './csv-row.js';
import type { RecordSchema } from './record-schema.js';
import type { Utf8Chunk } from './utf8-chunk.js';
import { csvColumnReader, csvColumnsOf, fieldsAsked, getPath, projectRecord } from './record-schema.js';
import { jsonText } from './json-text.js';

export const OUTPUT_FORMATS = ['table', 'json', 'ndjson', 'csv', 'xml', 'value'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface FormatterOptions {
  format: OutputFormat;
  schema: RecordSchema;
  /** Selected columns (from `--fields`), or null for the whole record. */
  columns: readonly string[] | null;
  /** CSV header row (`--no-header` turns it off). */
  header: boolean;
  /** Colour in the table view. */
  color: boolean;
  /**
   * One target was asked for: json prints the record itself rather than an
   * array, and table prints a field/value view.
   */
  single: boolean;
  /**
   * The rows written continue a run whose first row another formatter
   * wrote (a bulk worker thread's rows): json separates the first of them
   * from the row before it, as it does every later row.
   */
  continuesRows?: boolean;
  /** Display columns the table view fits its lines to (the terminal's width); 80 when not given. */
  width?: number;
  /** Table view: every field of the record (`--all`), not the view's chosen facts. */
  all?: boolean;
  /** The caller writes each failed lookup's message to stderr: the table view does not repeat it. */
  errorsOnStderr?: boolean;
  /** Table view: the record's own view; absent: its columns as a generic view. */
  view?: HumanView;
}

/** The width the table view fits when the caller names none: a classic terminal. */
export const DEFAULT_WIDTH = 80;

/**
 * Turns a stream of outcomes into text chunks: `start()`, then `write()` per
 * outcome (in input order), then `end()`. Pure: no I/O, so the HTTP API uses
 * the same layer.
 */
export interface Formatter {
  start(): string;
  write(outcome: Outcome<unknown>): string;
  end(): string;
  /**
   * Writes what `write` returns, as UTF-8, straight into a chunk: for the
   * many rows of a bulk run, in a format that can do it without building
   * each row as a string first (csv).
   */
  writeTo?(outcome: Outcome<unknown>, out: Utf8Chunk): void;
  /**
   * Ends a started document when a failure stops the run (a list file that
   * cannot be read): the error as the document's last element where the
   * format carries one (json array, ndjson, xml), so stdout stays one
   * well-formed document. Null when the format has no place for it (the
   * caller reports it as usual), after closing what needs closing.
   */
  abort?(error: { code: string; message: string; details?: Record<string, unknown> }): { text: string; carriesError: boolean };
}

/** Rows of a horizontal table are printed in blocks so a long run streams. */
const TABLE_BLOCK_ROWS = 500;

export async function createFormatter(options: FormatterOptions): Promise<Formatter> {
  const { schema } = options;
  const readColumn = schema.readColumn ?? getPath;
  const context: FormatContext = {
    options,
    schema,
    columns: options.columns ?? schema.columns,
    presentColumn: schema.presentColumn ?? readColumn,
    shape: (record) => (options.columns ? projectRecord(record, options.columns, readColumn) : record),
  };
  switch (options.format) {
    case 'json':
      return jsonFormatter(context);
    case 'ndjson':
      return ndjsonFormatter(context);
    case 'csv':
      return csvFormatter(context);
    case 'xml':
      return xmlFormatter(context);
    case 'value':
      return valueFormatter(context);
    case 'table':
      return tableFormatter(context);
  }
}

/** What every format reads of the options and the schema. */
interface FormatContext {
  readonly options: FormatterOptions;
  readonly schema: RecordSchema;
  /** The columns asked for, or the schema's. */
  readonly columns: readonly string[];
  /** A column's value as shown. */
  readonly presentColumn: (record: unknown, column: string) => unknown;
  /** The record, projected on the columns asked for (`--fields`). */
  readonly shape: (record: unknown) => unknown;
}

type FailedOutcome = Extract<Outcome<unknown>, { ok: false }>;

function errorJson(outcome: FailedOutcome) {
  return { query: outcome.query, error: outcome.error.toJSON() };
}

function jsonFormatter({ options, shape }: FormatContext): Formatter {
  let count = options.continuesRows === true ? 1 : 0;
  return {
    start: () => (options.single ? '' : '['),
    write: (outcome) => {
      const body = jsonText(outcome.ok ? shape(outcome.value) : errorJson(outcome), 2);
      if (options.single) return `${body}\n`;
      return `${count++ === 0 ? '\n' : ',\n'}${body.replace(/^/gm, '  ')}`;
    },
    end: () => (options.single ? '' : count === 0 ? ']\n' : '\n]\n'),
    abort: (error) => {
      if (options.single) return { text: '', carriesError: false };
      const body = jsonText({ error }, 2).replace(/^/gm, '  ');
      return { text: `${count++ === 0 ? '\n' : ',\n'}${body}\n]\n`, carriesError: true };
    },
  };
}

function ndjsonFormatter({ shape }: FormatContext): Formatter {
  return {
    start: () => '',
    write: (outcome) => `${jsonText(outcome.ok ? shape(outcome.value) : errorJson(outcome))}\n`,
    end: () => '',
    abort: (error) => ({ text: `${jsonText({ error })}\n`, carriesError: true }),
  };
}

async function csvFormatter({ options, schema, columns, presentColumn }: FormatContext): Promise<Formatter> {
  // Each format's library loads only when that format is asked for.
  const [{ csvCell, csvRow }, { createCsvRecordWriter, csvRecordText, writeCsvCell }] = await Promise.all([import('./csv-row.js'), import('./csv-encoder.js')]);
  const flatColumns = csvColumnsOf(schema, columns);
  const readCsvColumn = csvColumnReader(schema, presentColumn);
  const csvColumns = ['query', ...flatColumns, 'error.code', 'error.message'];
  const writeRecord = (await schema.csvRecordWriter?.(flatColumns)) ?? plainCsvWriter(schema, flatColumns, createCsvRecordWriter) ?? presentedCsvWriter(flatColumns, readCsvColumn, writeCsvCell);
  const noRecord = flatColumns.map(() => '').join(',');
  const failedRow = (outcome: FailedOutcome) =>
    `${csvCell(outcome.query)},${noRecord},${csvCell(outcome.error.code)},${csvCell(outcome.error.message)}\n`;
  const rowEnd = Buffer.from(',,\n');
  const formatter: Formatter = {
    start: () => (options.header ? csvRow(csvColumns) : ''),
    write: (outcome) => (outcome.ok ? `${csvCell(outcome.query)},${csvRecordText(writeRecord, outcome.value)},,\n` : failedRow(outcome)),
    end: () => '',
    writeTo: (outcome, out) => {
      if (!outcome.ok) return out.append(failedRow(outcome));
      writeCsvCell(outcome.query, out);
      out.appendByte(0x2c);
      writeRecord(outcome.value, out);
      out.appendBytes(rowEnd);
    },
  };
  return formatter;
}

async function xmlFormatter({ schema, shape }: FormatContext): Promise<Formatter> {
  const { xmlError, xmlFooter, xmlHeader, xmlRecord } = await import('./xml.js');
  return {
    start: () => xmlHeader(schema.kind),
    write: (outcome) =>
      outcome.ok ? xmlRecord(shape(outcome.value)) : xmlError(outcome.query, outcome.error.code, outcome.error.message),
    end: () => xmlFooter(),
    abort: (error) => ({ text: xmlError('', error.code, error.message) + xmlFooter(), carriesError: false }),
  };
}

async function valueFormatter({ options, schema, presentColumn }: FormatContext): Promise<Formatter> {
  const { mainValueColumns, valueText } = await import('./value-format.js');
  const fields = options.columns ? (fieldsAsked(options.columns) ?? options.columns) : mainValueColumns(schema);
  return {
    start: () => '',
    write: (outcome) => `${outcome.ok ? fields.map((field) => valueText(presentColumn(outcome.value, field))).join('\t') : ''}\n`,
    end: () => '',
  };
}

async function tableFormatter({ options, schema }: FormatContext): Promise<Formatter> {
  const { createHumanView } = await import('./human/human-view.js');
  const width = options.width ?? DEFAULT_WIDTH;
  const view = createHumanView({ schema, columns: options.columns, width, color: options.color, all: options.all === true, errorsOnStderr: options.errorsOnStderr === true, ...(options.view ? { view: options.view } : {}) });
  if (options.single) {
    // The error of a failed lookup goes to stderr alone. The data credit goes to stderr too (src/cli/attribution.ts).
    return {
      start: () => '',
      write: (outcome) => (outcome.ok ? view.single(outcome) : ''),
      end: () => '',
    };
  }
  let block: Array<{ query: string; record: unknown; error: { code: string; message: string } | null }> = [];
  const flush = () => {
    const text = view.many(block);
    block = [];
    return text;
  };
  return {
    start: () => '',
    write: (outcome) => {
      block.push(
        outcome.ok
          ? { query: outcome.query, record: outcome.value, error: null }
          : { query: outcome.query, record: null, error: outcome.error.toJSON() },
      );
      return block.length >= TABLE_BLOCK_ROWS ? flush() : '';
    },
    end: () => flush(),
    abort: () => ({ text: flush(), carriesError: false }),
  };
}

/**
 * The record writer of a schema whose columns are read (or presented) by
 * the schema: each cell read by `read` and written straight into the chunk
 * (the DNS answers in zone-file form, bulk rows of several kinds).
 */
function presentedCsvWriter(
  columns: readonly string[],
  read: (record: unknown, column: string) => unknown,
  writeCell: (cell: CsvCell, out: Utf8Chunk) => void,
): CsvRecordWriter {
  return (record, out) => {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) out.appendByte(0x2c);
      writeCell(read(record, columns[i]!) as CsvCell, out);
    }
  };
}

/** The compiled record writer when the schema's columns are plain paths (directly or through `adapt`). */
function plainCsvWriter(schema: RecordSchema, columns: readonly string[], create: (columns: readonly string[]) => CsvRecordWriter): CsvRecordWriter | null {
  if (schema.adapt) {
    const write = create(columns);
    const adapt = schema.adapt;
    return (record, out) => write(adapt(record), out);
  }
  return schema.readColumn || schema.presentColumn ? null : create(columns);
}

export function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}
