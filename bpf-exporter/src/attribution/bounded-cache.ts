/** A Map with a size cap (oldest insertion evicted) and a time-to-live, so attribution memory stays bounded. */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, { v: V; at: number }>();
  constructor(
    readonly capacity: number,
    readonly ttlMs: number
  ) {}

  get(k: K, now = Date.now()): V | undefined {
    const hit = this.map.get(k);
    if (!hit) return undefined;
    if (now - hit.at > this.ttlMs) {
      this.map.delete(k);
      return undefined;
    }
    return hit.v;
  }

  set(k: K, v: V, now = Date.now()): void {
    this.map.delete(k);
    if (this.map.size >= this.capacity) this.map.delete(this.map.keys().next().value as K);
    this.map.set(k, { v, at: now });
  }

  delete(k: K): void {
    this.map.delete(k);
  }
  clear(): void {
    this.map.clear();
  }
  get size(): number {
    return this.map.size;
  }
}
