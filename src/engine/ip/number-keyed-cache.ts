/** A key for a full set takes a slot on one miss in this many (a power of two). */
const ADMIT_ONE_IN = 16;

/**
 * A bounded cache of values by number key, for the objects a bulk run
 * builds once and shares between rows. Two-way set-associative: a key can
 * live in one of two slots picked by its hash, the more recently used first.
 * A hit costs a multiply and two array reads, far less than a Map lookup.
 *
 * When both slots of a set are taken, a new key evicts the less recent one
 * only on one miss in {@link ADMIT_ONE_IN}. On random input that keeps the
 * frequent keys (the hit rate equals evicting on every miss) while evicting
 * a sixteenth as often: every evicted entry is garbage in the old
 * generation, which is what made the heap grow all through a bulk run. A
 * key that keeps coming (sorted input) still gets in after a few misses.
 */
export class NumberKeyedCache<V> {
  private readonly keys: Float64Array;
  private readonly values: Array<V | undefined>;
  /** Right shift that turns a 32-bit hash into a set number. */
  private readonly shift: number;
  private misses = 0;

  /** @param capacity slots in all, a power of two of at least 4 */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 4 || (capacity & (capacity - 1)) !== 0) {
      throw new RangeError(`cache capacity ${capacity} is not a power of two of at least 4`);
    }
    this.shift = 33 - Math.log2(capacity);
    // NaN equals no key, so an empty slot never matches.
    this.keys = new Float64Array(capacity).fill(Number.NaN);
    this.values = new Array<V | undefined>(capacity).fill(undefined);
  }

  get(key: number): V | undefined {
    const at = this.setOf(key);
    const keys = this.keys;
    if (keys[at] === key) return this.values[at];
    if (keys[at + 1] === key) {
      const value = this.values[at + 1];
      this.moveFirstToSecond(at);
      keys[at] = key;
      this.values[at] = value;
      return value;
    }
    return undefined;
  }

  /**
   * Offers `value` for `key`: replaces the key's old value, takes a free
   * slot, or (set full) evicts the less recent entry on one miss in
   * {@link ADMIT_ONE_IN} and is dropped otherwise.
   */
  set(key: number, value: V): void {
    const at = this.setOf(key);
    const keys = this.keys;
    if (keys[at] === key || keys[at + 1] === key) {
      if (keys[at] !== key) this.moveFirstToSecond(at);
    } else if (Number.isNaN(keys[at]!)) {
      // Both slots free: the set is empty.
    } else if (Number.isNaN(keys[at + 1]!) || (++this.misses & (ADMIT_ONE_IN - 1)) === 0) {
      this.moveFirstToSecond(at);
    } else {
      return;
    }
    keys[at] = key;
    this.values[at] = value;
  }

  /** Index of the first slot of the key's set (Fibonacci hashing of the key's low 32 bits). */
  private setOf(key: number): number {
    return (Math.imul(key, 0x9e3779b1) >>> this.shift) << 1;
  }

  private moveFirstToSecond(at: number): void {
    this.keys[at + 1] = this.keys[at]!;
    this.values[at + 1] = this.values[at];
  }
}
