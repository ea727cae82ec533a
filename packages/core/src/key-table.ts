/** What a slot holds after its entry was removed: probing continues past it, and an insert may reuse it. */
const REMOVED = Symbol('removed');

type Slot = string | typeof REMOVED | undefined;

const MIN_CAPACITY = 16;

/**
 * A table from string keys to values for entries that come and go by the thousand, such as the runs a worker has in
 * flight. A `Map` serves the same calls, but V8 gives a `Map` new storage as entries come and go, and a storage it
 * left behind keeps pointing at the entries it held and at the storage that replaced it. Once such a storage has
 * reached the old generation, the young-generation collector treats what it points at as alive until the next full
 * collection, so every entry of every later storage, and all that an entry references (a page's records, closures
 * and promises), is copied and promoted instead of dying young (docs/benchmarks.md, "A Map in the hot path"). This
 * table overwrites its slots in place (open addressing, linear probing) and clears any array it replaces, so an entry
 * is garbage as soon as it is removed.
 */
export class KeyTable<V> {
  private keys: Slot[] = new Array<Slot>(MIN_CAPACITY).fill(undefined);
  private slots: (V | undefined)[] = new Array<V | undefined>(MIN_CAPACITY).fill(undefined);
  /** Live entries. */
  private count = 0;
  /** Live entries and removed slots: probing ends only at an empty slot, so both fill the table. */
  private taken = 0;

  /** The number of entries. */
  get size(): number {
    return this.count;
  }

  /** The value of `key`, or `undefined`. */
  get(key: string): V | undefined {
    const index = this.find(key);
    return index < 0 ? undefined : this.slots[index];
  }

  /** Whether `key` has an entry. */
  has(key: string): boolean {
    return this.find(key) >= 0;
  }

  /** Sets the value of `key`, adding the entry if it is new. */
  set(key: string, value: V): this {
    const found = this.find(key);
    if (found >= 0) {
      this.slots[found] = value;
      return this;
    }
    if ((this.taken + 1) * 2 > this.keys.length) this.rebuild(this.count + 1);
    const mask = this.keys.length - 1;
    let index = hash(key) & mask;
    // Inserting needs the first slot that holds no live entry: `find` above proved the key is not further on.
    while (typeof this.keys[index] === 'string') index = (index + 1) & mask;
    if (this.keys[index] === undefined) this.taken++;
    this.keys[index] = key;
    this.slots[index] = value;
    this.count++;
    return this;
  }

  /** Removes the entry of `key`; answers whether there was one. */
  delete(key: string): boolean {
    const index = this.find(key);
    if (index < 0) return false;
    this.keys[index] = REMOVED;
    this.slots[index] = undefined;
    this.count--;
    return true;
  }

  /** Removes every entry. */
  clear(): void {
    this.keys.fill(undefined);
    this.slots.fill(undefined);
    this.count = 0;
    this.taken = 0;
  }

  /** The values, in no particular order, as a new array. */
  values(): V[] {
    const values: V[] = [];
    for (let i = 0; i < this.keys.length; i++) {
      if (typeof this.keys[i] === 'string') values.push(this.slots[i] as V);
    }
    return values;
  }

  /** The slot of `key`, or -1. */
  private find(key: string): number {
    const keys = this.keys;
    const mask = keys.length - 1;
    let index = hash(key) & mask;
    for (;;) {
      const slot = keys[index];
      if (slot === undefined) return -1;
      if (slot === key) return index;
      index = (index + 1) & mask;
    }
  }

  /**
   * Moves the live entries into arrays sized for `needed` entries at most a quarter full, and clears the old arrays
   * so that, wherever they live in the heap, they point at nothing.
   */
  private rebuild(needed: number): void {
    const oldKeys = this.keys;
    const oldSlots = this.slots;
    let capacity = MIN_CAPACITY;
    while (capacity < needed * 4) capacity *= 2;
    this.keys = new Array<Slot>(capacity).fill(undefined);
    this.slots = new Array<V | undefined>(capacity).fill(undefined);
    this.count = 0;
    this.taken = 0;
    const mask = capacity - 1;
    for (let i = 0; i < oldKeys.length; i++) {
      const key = oldKeys[i];
      if (typeof key !== 'string') continue;
      let index = hash(key) & mask;
      while (this.keys[index] !== undefined) index = (index + 1) & mask;
      this.keys[index] = key;
      this.slots[index] = oldSlots[i];
      this.count++;
      this.taken++;
    }
    oldKeys.fill(undefined);
    oldSlots.fill(undefined);
  }
}

/** FNV-1a over the UTF-16 code units of `key`: run ids share their leading (time) digits, so every unit counts. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
