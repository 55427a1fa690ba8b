import { parseIpv4Fast } from '../address/ip-text.js';

/** Slots of the IPv4 table to begin with; it doubles as it fills. */
const INITIAL_SLOTS = 1 << 12;
/** The IPv4 table grows when more than this share of its slots is taken: probes stay short. */
const MAX_LOAD = 0.5;

/**
 * The distinct addresses of a run, counted up to `cap` and then no more
 * (the count is then a lower bound). IPv4 addresses are kept as 32-bit
 * numbers in an open-addressing table: a million of them take a few MB
 * and no garbage-collected objects, where a Set of their texts takes
 * over a hundred MB and slows every collection down. Other texts (IPv6)
 * go to a Set.
 */
export class DistinctAddresses {
  private slots = new Uint32Array(INITIAL_SLOTS);
  /** 32 minus log2 of the slots: a slot is the top bits of the multiplied address. */
  private shift = 32 - Math.log2(INITIAL_SLOTS);
  /** Taken slots hold the address + 1, so 0 marks a free slot; 255.255.255.255 (+ 1 overflows) is a flag of its own. */
  private v4 = 0;
  private broadcast = false;
  private readonly others = new Set<string>();
  /** Set once an address came that the cap left uncounted. */
  capped = false;

  constructor(private readonly cap: number) {}

  get size(): number {
    return this.v4 + (this.broadcast ? 1 : 0) + this.others.size;
  }

  /** Counts `address` (in canonical form: the same address, the same text) unless it was seen. */
  add(address: string): void {
    const value = parseIpv4Fast(address);
    if (value === -1) {
      if (this.others.has(address)) return;
      if (this.full()) return;
      this.others.add(address);
      return;
    }
    if (value === 0xffff_ffff) {
      if (!this.broadcast && !this.full()) this.broadcast = true;
      return;
    }
    const stored = value + 1;
    const mask = this.slots.length - 1;
    let slot = this.slotOf(stored);
    for (;;) {
      const held = this.slots[slot]!;
      if (held === stored) return;
      if (held === 0) break;
      slot = (slot + 1) & mask;
    }
    if (this.full()) return;
    this.slots[slot] = stored;
    this.v4++;
    if (this.v4 > this.slots.length * MAX_LOAD) this.grow();
  }

  private full(): boolean {
    if (this.size < this.cap) return false;
    this.capped = true;
    return true;
  }

  /**
   * Fibonacci hashing (Knuth, TAOCP 6.4): the top bits of the product. Its
   * low bits depend on the address's low bits alone, so addresses alike in
   * those (a log's 32,768 addresses sharing their low 17 bits) all fell in
   * one run of slots, and each probe walked it.
   */
  private slotOf(stored: number): number {
    return Math.imul(stored, 0x9e37_79b1) >>> this.shift;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    this.shift -= 1;
    const mask = this.slots.length - 1;
    for (const stored of old) {
      if (stored === 0) continue;
      let slot = this.slotOf(stored);
      while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
      this.slots[slot] = stored;
    }
  }
}
