/**
 * A MaxMind DB (mmdb) reader with two access modes:
 *
 * - `pread`: keeps only a file descriptor and reads what one lookup needs with
 *   positioned reads of 4 KiB blocks: the metadata at the end of the file, the
 *   blocks of the search tree along the address's path, and those of the data
 *   section that hold the record and the shared strings it points to. A one-off
 *   lookup reads about ten blocks of a 60-70 MB file, so a CLI run does not pay
 *   for loading the database.
 * - `memory`: reads the whole file into one Buffer once; lookups then walk the
 *   tree with no allocation, for bulk runs over millions of addresses.
 *
 * The format decoder is written here by hand instead of taken from a library
 * because the published readers (mmdb-lib behind the `maxmind` package, and
 * others) all decode from one Buffer holding the whole file; none can follow
 * the data section's pointers lazily through positioned reads.
 *
 * Format: MaxMind DB File Format Specification 2.0,
 * https://maxmind.github.io/MaxMind-DB/ . File access (both modes, and its
 * errors) goes through `openDataFile`.
 */
import { NetintelError } from '../../errors.js';
import { openDataFile, type DataFile } from './data-file-reader.js';

/** How an {@link MmdbFile} reaches its bytes: positioned reads, or one Buffer holding the file. */
export type MmdbMode = 'pread' | 'memory';

/** Options of {@link MmdbFile.open}. */
export interface MmdbOpenOptions {
  /** `pread` (default) for one-off lookups, `memory` for bulk runs. */
  mode?: MmdbMode;
  /** How many decoded records to keep, by data offset (default 4096; 0 disables the cache). */
  cacheSize?: number;
}

/**
 * A decoded MaxMind DB value. Maps become plain objects and arrays become
 * arrays, both frozen because decoded records are shared through the cache;
 * `bytes` become a copied Uint8Array; uint64 and uint128 become bigint.
 */
export type MmdbValue =
  | string
  | number
  | boolean
  | bigint
  | Uint8Array
  | readonly MmdbValue[]
  | { readonly [key: string]: MmdbValue };

/** The metadata section of a MaxMind DB file. */
export interface MmdbMetadata {
  /** Free-form database type, e.g. `city ipv4`. */
  readonly databaseType: string;
  /** 4 for a tree of 32-bit addresses, 6 for a tree of 128-bit addresses. */
  readonly ipVersion: 4 | 6;
  /** When the database was built (`build_epoch`, seconds since the Unix epoch). */
  readonly buildEpoch: Date;
  /** Number of nodes in the search tree. */
  readonly nodeCount: number;
  /** Bits per search-tree record: 24, 28 or 32. */
  readonly recordSize: number;
  /** Locale codes the database may hold names for (empty when not given). */
  readonly languages: readonly string[];
  /** Descriptions by language code (empty when not given). */
  readonly description: Readonly<Record<string, string>>;
  /** Always 2: the only major version this reader accepts. */
  readonly binaryFormatMajorVersion: number;
  readonly binaryFormatMinorVersion: number;
}

/** "\xAB\xCD\xEFMaxMind.com" */
const METADATA_MARKER = new Uint8Array([
  0xab, 0xcd, 0xef, 0x4d, 0x61, 0x78, 0x4d, 0x69, 0x6e, 0x64, 0x2e, 0x63, 0x6f, 0x6d,
]);
/** The spec caps the metadata section at 128 KiB; most are a few hundred bytes. */
const METADATA_MAX_BYTES = 128 * 1024;
const METADATA_FIRST_TRY_BYTES = 4096;
/** Sixteen zero bytes separate the search tree from the data section. */
const DATA_SECTION_SEPARATOR_BYTES = 16;
/** Same nesting limit as libmaxminddb (MAXIMUM_DATA_STRUCTURE_DEPTH). */
const MAX_DATA_DEPTH = 512;
const BLOCK_BYTES = 4096;
const MAX_CACHED_BLOCKS = 32;
const MAX_CACHED_STRINGS = 4096;
const DEFAULT_RECORD_CACHE = 4096;
const EMPTY = Buffer.alloc(0);

// Data type numbers (spec section "Output Data Section").
const T_EXTENDED = 0;
const T_POINTER = 1;
const T_STRING = 2;
const T_DOUBLE = 3;
const T_BYTES = 4;
const T_UINT16 = 5;
const T_UINT32 = 6;
const T_MAP = 7;
const T_INT32 = 8;
const T_UINT64 = 9;
const T_UINT128 = 10;
const T_ARRAY = 11;
const T_BOOLEAN = 14;
const T_FLOAT = 15;

function invalidFile(path: string, why: string, cause?: unknown): NetintelError {
  return new NetintelError('data_unavailable', `${path} is not a valid MaxMind DB file: ${why}`, {
    cause,
    details: { path },
  });
}

/**
 * Positioned reads of a file in aligned blocks, kept in a tiny FIFO cache.
 * Both the search tree and the data section go through it in `pread` mode:
 * the writers number tree nodes depth-first, so the nodes of one walk mostly
 * sit in a handful of blocks.
 */
class BlockReader {
  /** File position of the first byte of the block returned last. */
  start = 0;
  private last: Buffer = EMPTY;
  private readonly blocks = new Map<number, Buffer>();

  constructor(
    private readonly path: string,
    private readonly file: DataFile,
    /** Bytes past this file position are never read (the metadata lies there). */
    private readonly end: number,
  ) {}

  /** A buffer holding file bytes [p, p + n), starting at file position `this.start`. */
  read(p: number, n: number): Buffer {
    if (p >= this.start && p + n <= this.start + this.last.length) return this.last;
    if (p < 0 || p + n > this.end) {
      throw invalidFile(this.path, `a read of ${n} bytes at byte ${p} runs past the end of its section`);
    }
    const first = p - (p % BLOCK_BYTES);
    let block: Buffer | undefined;
    if (p + n <= first + BLOCK_BYTES) {
      block = this.blocks.get(first);
      if (block === undefined) {
        block = this.file.read(first, Math.min(BLOCK_BYTES, this.end - first));
        if (this.blocks.size >= MAX_CACHED_BLOCKS) this.blocks.delete(this.blocks.keys().next().value!);
        this.blocks.set(first, block);
      }
    } else {
      // Bytes spanning blocks (a long string, a node across a boundary): one uncached read.
      const last = Math.min(this.end, Math.ceil((p + n) / BLOCK_BYTES) * BLOCK_BYTES);
      block = this.file.read(first, last - first);
    }
    this.start = first;
    this.last = block;
    return block;
  }

  release(): void {
    this.last = EMPTY;
    this.blocks.clear();
  }
}

/**
 * Decodes values of one section (the data section, or the metadata) through
 * a window of bytes: the whole section when it is in memory, else the blocks
 * of a {@link BlockReader}.
 */
class SectionDecoder {
  /** The bytes of the current window. */
  private buf: Buffer;
  /** Section position of `buf[0]` (negative when the section starts inside `buf`). */
  private winStart: number;
  /** Section position just past the window. */
  private winEnd: number;
  /** Position just past the value decoded last. */
  private pos = 0;
  /** Strings reached through pointers (map keys, city names) are shared by many records. */
  private readonly strings = new Map<number, string>();

  private constructor(
    private readonly path: string,
    buf: Buffer,
    private readonly fileStart: number,
    private readonly size: number,
    private readonly reader: BlockReader | null,
  ) {
    this.buf = buf;
    this.winStart = reader === null ? -fileStart : 0;
    this.winEnd = reader === null ? size : 0;
  }

  /** A section held in memory: `size` bytes of `buf` from `start`. */
  static inMemory(path: string, buf: Buffer, start: number, size: number): SectionDecoder {
    return new SectionDecoder(path, buf, start, size, null);
  }

  /** A section read through `reader`: `size` bytes from file position `fileStart`. */
  static throughReader(path: string, reader: BlockReader, fileStart: number, size: number): SectionDecoder {
    return new SectionDecoder(path, EMPTY, fileStart, size, reader);
  }

  /** Decodes the value at section position `offset`. */
  decodeAt(offset: number): MmdbValue {
    return this.value(offset, 0);
  }

  release(): void {
    this.buf = EMPTY;
    this.winStart = 0;
    this.winEnd = 0;
    this.strings.clear();
  }

  /**
   * Makes section bytes [p, p + n) readable and returns the index of byte p in
   * `this.buf`. It may swap `this.buf`, so read `this.buf` only after calling it.
   */
  private need(p: number, n: number): number {
    if (p < this.winStart || p + n > this.winEnd) this.fill(p, n);
    return p - this.winStart;
  }

  private fill(p: number, n: number): void {
    if (p < 0 || p + n > this.size || this.reader === null) {
      throw invalidFile(this.path, `a value at data offset ${p} runs past the end of its section`);
    }
    this.buf = this.reader.read(this.fileStart + p, n);
    this.winStart = this.reader.start - this.fileStart;
    this.winEnd = this.winStart + this.buf.length;
  }

  private value(p: number, depth: number): MmdbValue {
    if (depth > MAX_DATA_DEPTH) throw invalidFile(this.path, `data nested deeper than ${MAX_DATA_DEPTH} levels`);
    let i = this.need(p, 1);
    const ctrl = this.buf[i]!;
    p += 1;
    let type = ctrl >>> 5;
    if (type === T_POINTER) {
      const extra = ((ctrl >>> 3) & 3) + 1;
      i = this.need(p, extra);
      const target = this.pointerValue(ctrl, i, extra);
      const value = this.pointed(target, depth);
      this.pos = p + extra;
      return value;
    }
    if (type === T_EXTENDED) {
      i = this.need(p, 1);
      type = 7 + this.buf[i]!;
      p += 1;
      if (type < 8) throw invalidFile(this.path, `invalid extended type at data offset ${p - 1}`);
    }
    let size = ctrl & 0x1f;
    if (size >= 29) {
      const extra = size - 28;
      i = this.need(p, extra);
      const b = this.buf;
      if (extra === 1) size = 29 + b[i]!;
      else if (extra === 2) size = 285 + ((b[i]! << 8) | b[i + 1]!);
      else size = 65821 + ((b[i]! << 16) | (b[i + 1]! << 8) | b[i + 2]!);
      p += extra;
    }
    return this.payload(type, p, size, depth);
  }

  /** The data-section offset a pointer's bytes encode (spec: "Pointer - 1"). */
  private pointerValue(ctrl: number, i: number, extra: number): number {
    const b = this.buf;
    const high = ctrl & 7;
    switch (extra) {
      case 1:
        return (high << 8) | b[i]!;
      case 2:
        return ((high << 16) | (b[i]! << 8) | b[i + 1]!) + 2048;
      case 3:
        return ((high << 24) | (b[i]! << 16) | (b[i + 1]! << 8) | b[i + 2]!) + 526336;
      default:
        return b[i]! * 0x1000000 + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!);
    }
  }

  private pointed(target: number, depth: number): MmdbValue {
    const cached = this.strings.get(target);
    if (cached !== undefined) return cached;
    const i = this.need(target, 1);
    // The spec forbids a pointer to a pointer; libmaxminddb rejects it too.
    if (this.buf[i]! >>> 5 === T_POINTER) {
      throw invalidFile(this.path, `pointer to a pointer at data offset ${target}`);
    }
    const value = this.value(target, depth + 1);
    if (typeof value === 'string' && this.strings.size < MAX_CACHED_STRINGS) this.strings.set(target, value);
    return value;
  }

  private payload(type: number, p: number, size: number, depth: number): MmdbValue {
    switch (type) {
      case T_STRING: {
        this.pos = p + size;
        if (size === 0) return '';
        const i = this.need(p, size);
        return this.buf.toString('utf8', i, i + size);
      }
      case T_DOUBLE: {
        if (size !== 8) throw this.badSize('double', size, p);
        this.pos = p + 8;
        const i = this.need(p, 8);
        return this.buf.readDoubleBE(i);
      }
      case T_FLOAT: {
        if (size !== 4) throw this.badSize('float', size, p);
        this.pos = p + 4;
        const i = this.need(p, 4);
        return this.buf.readFloatBE(i);
      }
      case T_BYTES: {
        this.pos = p + size;
        if (size === 0) return new Uint8Array(0);
        const i = this.need(p, size);
        return new Uint8Array(this.buf.subarray(i, i + size));
      }
      case T_UINT16:
        if (size > 2) throw this.badSize('uint16', size, p);
        return this.uint(p, size);
      case T_UINT32:
        if (size > 4) throw this.badSize('uint32', size, p);
        return this.uint(p, size);
      case T_INT32: {
        if (size > 4) throw this.badSize('int32', size, p);
        // Only a full 4-byte int32 can be negative (two's complement).
        if (size < 4) return this.uint(p, size);
        this.pos = p + 4;
        const i = this.need(p, 4);
        const b = this.buf;
        return (b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!;
      }
      case T_UINT64:
        if (size > 8) throw this.badSize('uint64', size, p);
        return this.bigUint(p, size);
      case T_UINT128:
        if (size > 16) throw this.badSize('uint128', size, p);
        return this.bigUint(p, size);
      case T_BOOLEAN:
        if (size > 1) throw this.badSize('boolean', size, p);
        this.pos = p;
        return size === 1;
      case T_MAP: {
        const map: Record<string, MmdbValue> = {};
        for (let k = 0; k < size; k++) {
          const key = this.value(p, depth + 1);
          if (typeof key !== 'string') throw invalidFile(this.path, `map key is not a string at data offset ${p}`);
          const item = this.value(this.pos, depth + 1);
          p = this.pos;
          // A plain assignment to "__proto__" would replace the prototype instead.
          if (key === '__proto__') {
            Object.defineProperty(map, key, { value: item, enumerable: true, writable: true, configurable: true });
          } else {
            map[key] = item;
          }
        }
        this.pos = p;
        return Object.freeze(map);
      }
      case T_ARRAY: {
        const array: MmdbValue[] = new Array<MmdbValue>(size);
        for (let k = 0; k < size; k++) {
          array[k] = this.value(p, depth + 1);
          p = this.pos;
        }
        this.pos = p;
        return Object.freeze(array);
      }
      default:
        // 12 (data cache container) and 13 (end marker) never appear in a record.
        throw invalidFile(this.path, `unexpected data type ${type} at data offset ${p}`);
    }
  }

  private uint(p: number, size: number): number {
    this.pos = p + size;
    if (size === 0) return 0;
    const i = this.need(p, size);
    const b = this.buf;
    let v = 0;
    for (let k = 0; k < size; k++) v = v * 256 + b[i + k]!;
    return v;
  }

  private bigUint(p: number, size: number): bigint {
    this.pos = p + size;
    if (size === 0) return 0n;
    const i = this.need(p, size);
    const b = this.buf;
    let v = 0n;
    for (let k = 0; k < size; k++) v = (v << 8n) | BigInt(b[i + k]!);
    return v;
  }

  private badSize(type: string, size: number, p: number): NetintelError {
    return invalidFile(this.path, `${type} of ${size} bytes at data offset ${p}`);
  }
}

/** Bits of an IPv4 address resolved by table in `memory` mode (a table of 2^18 entries, 1.25 MiB). */
const V4_PREFIX_BITS = 18;

interface V4PrefixTable {
  /** The node (or leaf record) each prefix's walk reaches. */
  nodes: Uint32Array;
  /** The depth at which it is reached: V4_PREFIX_BITS, or less for a network wider than the prefix. */
  depths: Uint8Array;
}

interface Layout {
  metadata: MmdbMetadata;
  /** File position of the data section. */
  dataStart: number;
  dataSize: number;
}

/**
 * Finds and checks the metadata (the map after the last marker in the final
 * 128 KiB) and derives where the data section lies. `read` returns file bytes.
 */
function readLayout(path: string, fileSize: number, read: (position: number, length: number) => Buffer): Layout {
  let tailStart = Math.max(0, fileSize - METADATA_FIRST_TRY_BYTES);
  let tail = read(tailStart, fileSize - tailStart);
  let at = tail.lastIndexOf(METADATA_MARKER);
  if (at < 0 && tailStart > 0) {
    tailStart = Math.max(0, fileSize - METADATA_MAX_BYTES - METADATA_MARKER.length);
    tail = read(tailStart, fileSize - tailStart);
    at = tail.lastIndexOf(METADATA_MARKER);
  }
  if (at < 0) throw invalidFile(path, 'no metadata marker in its last 128 KiB');
  const metaStart = at + METADATA_MARKER.length;
  const raw = SectionDecoder.inMemory(path, tail, metaStart, tail.length - metaStart).decodeAt(0);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || raw instanceof Uint8Array) {
    throw invalidFile(path, 'metadata is not a map');
  }
  const fields = raw as { readonly [key: string]: MmdbValue | undefined };
  const uint = (key: string): number => {
    const v = fields[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalidFile(path, `metadata ${key} is missing`);
    return v;
  };
  const major = uint('binary_format_major_version');
  if (major !== 2) throw invalidFile(path, `binary format version ${major} is not supported (only 2)`);
  const minor = uint('binary_format_minor_version');
  const nodeCount = uint('node_count');
  if (nodeCount === 0) throw invalidFile(path, 'metadata node_count is 0');
  const recordSize = uint('record_size');
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) {
    throw invalidFile(path, `record size ${recordSize} is not supported (24, 28 or 32)`);
  }
  const ipVersion = uint('ip_version');
  if (ipVersion !== 4 && ipVersion !== 6) throw invalidFile(path, `ip_version ${ipVersion} is not 4 or 6`);
  const databaseType = fields['database_type'];
  if (typeof databaseType !== 'string') throw invalidFile(path, 'metadata database_type is missing');
  const epoch = fields['build_epoch'];
  if (typeof epoch !== 'bigint' && typeof epoch !== 'number') throw invalidFile(path, 'metadata build_epoch is missing');
  const languages = fields['languages'] ?? [];
  if (!Array.isArray(languages) || !languages.every((l) => typeof l === 'string')) {
    throw invalidFile(path, 'metadata languages is not a list of strings');
  }
  const description = fields['description'] ?? {};
  if (
    typeof description !== 'object' ||
    Array.isArray(description) ||
    description instanceof Uint8Array ||
    !Object.values(description).every((d) => typeof d === 'string')
  ) {
    throw invalidFile(path, 'metadata description is not a map of strings');
  }

  // Each node holds two records of recordSize bits.
  const treeSize = (nodeCount * recordSize) / 4;
  const dataStart = treeSize + DATA_SECTION_SEPARATOR_BYTES;
  const dataEnd = tailStart + at;
  if (dataStart > dataEnd) {
    throw invalidFile(path, `its search tree of ${nodeCount} nodes does not fit before the metadata`);
  }
  const metadata: MmdbMetadata = Object.freeze({
    databaseType,
    ipVersion,
    buildEpoch: new Date(Number(epoch) * 1000),
    nodeCount,
    recordSize,
    languages: languages as readonly string[],
    description: description as Readonly<Record<string, string>>,
    binaryFormatMajorVersion: major,
    binaryFormatMinorVersion: minor,
  });
  return { metadata, dataStart, dataSize: dataEnd - dataStart };
}

/**
 * One open MaxMind DB file. Open with {@link MmdbFile.open}; find an
 * address's record offset with {@link MmdbFile.findOffset} or
 * {@link MmdbFile.findOffsetV4}, then {@link MmdbFile.decode} it.
 *
 * ```ts
 * const db = MmdbFile.open(file);
 * const offset = db.findOffsetV4(0x08080808); // 8.8.8.8
 * const record = offset < 0 ? null : db.decode(offset);
 * db.close();
 * ```
 */
export class MmdbFile {
  /** The file this reader was opened on. */
  readonly path: string;
  /** The file's metadata section. */
  readonly metadata: MmdbMetadata;
  /** How this reader reaches the file's bytes. */
  readonly mode: MmdbMode;
  /**
   * Prefix length, in bits, of the network that answered the last find call
   * (also when nothing was found: the length of the empty network). For a
   * 4-byte address it counts IPv4 bits, also in an IPv6 tree, as the `maxmind`
   * package does.
   */
  lastPrefixLength = 0;

  /** `memory` mode: the whole file (empty in `pread` mode). */
  private buf: Buffer;
  private readonly file: DataFile;
  /** `pread` mode: the blocks of the tree and data section read so far. */
  private readonly reader: BlockReader | null;
  private readonly nodeCount: number;
  private readonly nodeBytes: number;
  private readonly recordSize: number;
  private readonly dataSize: number;
  /** Node where IPv4 addresses start (the end of ::/96 in an IPv6 tree); -1 until first needed. */
  private ipv4Start: number;
  private readonly decoder: SectionDecoder;
  private readonly records = new Map<number, MmdbValue>();
  private readonly cacheSize: number;
  /** `memory` mode: where each IPv4 prefix's walk ends, built on the first IPv4 lookup. */
  private v4Prefixes: V4PrefixTable | null = null;
  private closed = false;

  private constructor(path: string, layout: Layout, file: DataFile, cacheSize: number) {
    this.path = path;
    this.mode = file.mode;
    this.metadata = layout.metadata;
    this.file = file;
    this.nodeCount = layout.metadata.nodeCount;
    this.recordSize = layout.metadata.recordSize;
    this.nodeBytes = this.recordSize / 4;
    this.dataSize = layout.dataSize;
    this.ipv4Start = layout.metadata.ipVersion === 4 ? 0 : -1;
    this.cacheSize = cacheSize;
    if (file.mode === 'memory') {
      this.buf = file.whole();
      this.reader = null;
      this.decoder = SectionDecoder.inMemory(path, this.buf, layout.dataStart, layout.dataSize);
    } else {
      this.buf = EMPTY;
      this.reader = new BlockReader(path, file, layout.dataStart + layout.dataSize);
      this.decoder = SectionDecoder.throughReader(path, this.reader, layout.dataStart, layout.dataSize);
    }
  }

  /**
   * Opens a MaxMind DB file. `pread` mode (the default) reads only its
   * metadata now; `memory` mode reads the whole file.
   *
   * @throws NetintelError `data_unavailable` (details.path) when the file is
   *   missing, unreadable, or not a valid MaxMind DB file (format version 2,
   *   record size 24/28/32, IP version 4/6).
   */
  static open(path: string, options: MmdbOpenOptions = {}): MmdbFile {
    const mode: MmdbMode = options.mode === 'memory' ? 'memory' : 'pread';
    const cacheSize = Math.max(0, Math.floor(options.cacheSize ?? DEFAULT_RECORD_CACHE));
    const file = openDataFile(path, mode, { kind: 'MaxMind DB file' });
    try {
      const layout = readLayout(path, file.size, (position, length) => file.read(position, length));
      return new MmdbFile(path, layout, file, cacheSize);
    } catch (error) {
      file.close();
      throw error instanceof NetintelError ? error : invalidFile(path, String(error), error);
    }
  }

  /**
   * Data-section offset of the record for an address, or -1 when the
   * database has no record for it; sets {@link MmdbFile.lastPrefixLength}.
   *
   * @param address 4 bytes (IPv4) or 16 bytes (IPv6), network order. In an
   *   IPv6 tree an IPv4 address is looked up at `::a.b.c.d`. A 16-byte address
   *   in an IPv4 tree is never found (map IPv4-mapped addresses to 4 bytes first).
   * @throws NetintelError `invalid_input` when the address is neither 4 nor 16
   *   bytes; `data_unavailable` when the tree is corrupt or the file cannot be read.
   */
  findOffset(address: Uint8Array): number {
    if (address.length === 4) {
      return this.findOffsetV4(((address[0]! << 24) | (address[1]! << 16) | (address[2]! << 8) | address[3]!) >>> 0);
    }
    if (address.length !== 16) {
      throw new NetintelError('invalid_input', `an IP address has 4 or 16 bytes, not ${address.length}`, {
        details: { length: address.length },
      });
    }
    this.assertOpen();
    if (this.metadata.ipVersion === 4) {
      this.lastPrefixLength = 0;
      return -1;
    }
    const count = this.nodeCount;
    let node = 0;
    let depth = 0;
    for (; depth < 128 && node < count; depth++) {
      node = this.child(node, (address[depth >>> 3]! >>> (7 - (depth & 7))) & 1);
    }
    return this.resolve(node, depth);
  }

  /**
   * {@link MmdbFile.findOffset} for an IPv4 address given as an unsigned
   * 32-bit integer (8.8.8.8 is 0x08080808; a signed int32 is read as its
   * unsigned value). Allocates nothing.
   */
  findOffsetV4(address: number): number {
    this.assertOpen();
    if (this.reader === null) return this.findOffsetV4InMemory(address >>> 0);
    let node = this.ipv4Start >= 0 ? this.ipv4Start : this.findIpv4Start();
    const count = this.nodeCount;
    let depth = 0;
    for (; depth < 32 && node < count; depth++) {
      node = this.child(node, (address >>> (31 - depth)) & 1);
    }
    return this.resolve(node, depth);
  }

  /**
   * Decodes the record at a data-section offset (from a find call). Records
   * are cached by offset, since many networks share one record; the returned
   * value is frozen and may be shared between calls.
   *
   * @throws NetintelError `invalid_input` when the offset lies outside the data
   *   section; `data_unavailable` when the data is corrupt or cannot be read.
   */
  decode(offset: number): MmdbValue {
    this.assertOpen();
    const cached = this.records.get(offset);
    if (cached !== undefined) return cached;
    if (!Number.isInteger(offset) || offset < 0 || offset >= this.dataSize) {
      throw new NetintelError('invalid_input', `data offset ${offset} is outside the data section of ${this.path}`, {
        details: { path: this.path, offset },
      });
    }
    const value = this.decoder.decodeAt(offset);
    if (this.cacheSize > 0) {
      if (this.records.size >= this.cacheSize) this.records.delete(this.records.keys().next().value!);
      this.records.set(offset, value);
    }
    return value;
  }

  /** Releases the file descriptor or the in-memory copy; later calls throw. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.buf = EMPTY;
    this.v4Prefixes = null;
    this.records.clear();
    this.decoder.release();
    this.reader?.release();
    this.file.close();
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new NetintelError('internal', `MaxMind DB file ${this.path} is already closed`, {
        details: { path: this.path },
      });
    }
  }

  /**
   * The memory-mode IPv4 walk: the first {@link V4_PREFIX_BITS} bits come
   * from a table of where each prefix's walk ends up, the rest is walked in a
   * loop specialised for the record size. A random address's walk touches a
   * different part of the 40-60 MB tree at every level, so skipping the top
   * levels saves the cache misses, and the specialised loop the per-step
   * method call and switch.
   */
  private findOffsetV4InMemory(address: number): number {
    const prefixes = (this.v4Prefixes ??= this.buildV4Prefixes());
    const prefix = address >>> (32 - V4_PREFIX_BITS);
    let node = prefixes.nodes[prefix]!;
    let depth = prefixes.depths[prefix]!;
    const count = this.nodeCount;
    const b = this.buf;
    if (this.recordSize === 28) {
      for (; depth < 32 && node < count; depth++) {
        const o = node * 7;
        node =
          ((address >>> (31 - depth)) & 1) === 0
            ? ((b[o + 3]! & 0xf0) << 20) | (b[o]! << 16) | (b[o + 1]! << 8) | b[o + 2]!
            : ((b[o + 3]! & 0x0f) << 24) | (b[o + 4]! << 16) | (b[o + 5]! << 8) | b[o + 6]!;
      }
    } else if (this.recordSize === 24) {
      for (; depth < 32 && node < count; depth++) {
        const o = node * 6 + ((address >>> (31 - depth)) & 1) * 3;
        node = (b[o]! << 16) | (b[o + 1]! << 8) | b[o + 2]!;
      }
    } else {
      for (; depth < 32 && node < count; depth++) {
        const o = node * 8 + ((address >>> (31 - depth)) & 1) * 4;
        node = b[o]! * 0x1000000 + ((b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!);
      }
    }
    return this.resolve(node, depth);
  }

  /** Where the walk of every {@link V4_PREFIX_BITS}-bit IPv4 prefix ends: a node at that depth, or an earlier leaf. */
  private buildV4Prefixes(): V4PrefixTable {
    const size = 1 << V4_PREFIX_BITS;
    const table: V4PrefixTable = { nodes: new Uint32Array(size), depths: new Uint8Array(size) };
    const count = this.nodeCount;
    const fill = (node: number, depth: number, prefix: number): void => {
      if (depth === V4_PREFIX_BITS) {
        table.nodes[prefix] = node;
        table.depths[prefix] = depth;
        return;
      }
      if (node >= count) {
        const span = 1 << (V4_PREFIX_BITS - depth);
        table.nodes.fill(node, prefix * span, (prefix + 1) * span);
        table.depths.fill(depth, prefix * span, (prefix + 1) * span);
        return;
      }
      fill(this.child(node, 0), depth + 1, prefix * 2);
      fill(this.child(node, 1), depth + 1, prefix * 2 + 1);
    };
    fill(this.ipv4Start >= 0 ? this.ipv4Start : this.findIpv4Start(), 0, 0);
    return table;
  }

  /** Descends 96 zero bits once: IPv4 addresses live at ::a.b.c.d in an IPv6 tree. */
  private findIpv4Start(): number {
    let node = 0;
    for (let depth = 0; depth < 96 && node < this.nodeCount; depth++) node = this.child(node, 0);
    this.ipv4Start = node;
    return node;
  }

  /** The left (bit 0) or right (bit 1) record of a node (spec: "Search Tree Section"). */
  private child(node: number, bit: number): number {
    let b = this.buf;
    let o = node * this.nodeBytes;
    if (this.reader !== null) {
      b = this.reader.read(o, this.nodeBytes);
      o -= this.reader.start;
    }
    switch (this.recordSize) {
      case 28:
        // The middle byte holds the high nibble of the left record, then of the right one.
        return bit === 0
          ? ((b[o + 3]! & 0xf0) << 20) | (b[o]! << 16) | (b[o + 1]! << 8) | b[o + 2]!
          : ((b[o + 3]! & 0x0f) << 24) | (b[o + 4]! << 16) | (b[o + 5]! << 8) | b[o + 6]!;
      case 24:
        o += bit * 3;
        return (b[o]! << 16) | (b[o + 1]! << 8) | b[o + 2]!;
      default:
        o += bit * 4;
        return b[o]! * 0x1000000 + ((b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!);
    }
  }

  /** Turns the record that ended a walk into a data offset (spec: "Pointer to the data section"). */
  private resolve(record: number, depth: number): number {
    this.lastPrefixLength = depth;
    const count = this.nodeCount;
    if (record === count) return -1;
    if (record < count) throw invalidFile(this.path, 'its search tree is deeper than the address');
    const offset = record - count - DATA_SECTION_SEPARATOR_BYTES;
    if (offset < 0 || offset >= this.dataSize) {
      throw invalidFile(this.path, `search tree record ${record} points outside the data section`);
    }
    return offset;
  }
}
