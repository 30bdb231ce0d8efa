/**
 * The duration histograms of the rollups: log-scale buckets 2% wide (bucketOf), each with its
 * count and its smallest and largest value, from which the median is found (medianFromBuckets:
 * exact, or within 1%); sparse while a batch is aggregated (Histogram), dense and encoded as one
 * blob per stored row (DenseHistogram). Pure.
 */

/** The relative width of a duration bucket: bucket b holds [1.02^b, 1.02^(b+1)). */
export const BUCKET_RATIO = 1.02;
const LOG_RATIO = Math.log(BUCKET_RATIO);
/** Durations below 1 ms (0 in practice) and negative ones (never logged) get their own buckets. */
const BELOW_ONE = -1;
const NEGATIVE = -2;

export function bucketOf(ms: number): number {
  if (ms >= 1) return Math.floor(Math.log(ms) / LOG_RATIO);
  return ms >= 0 ? BELOW_ONE : NEGATIVE;
}

export interface Bucket {
  bucket: number;
  n: number;
  lo: number;
  hi: number;
}

/**
 * The median of the values a histogram holds (buckets in ascending order): the value of rank
 * (n + 1) / 2, or the mean of ranks n / 2 and n / 2 + 1 for an even count, as the exact median is
 * defined. A rank is read from its bucket: the first of a bucket is its `lo` and the last its `hi`
 * (both exact); one in between is the middle of [lo, hi], within 1% of the true value, because a
 * bucket spans 2% (hi < 1.02 lo) and the middle is at most half of that from any value in it.
 */
export function medianFromBuckets(buckets: readonly Bucket[]): number | null {
  const total = buckets.reduce((s, b) => s + b.n, 0);
  if (total === 0) return null;
  const at = (rank: number): number => {
    let before = 0;
    for (const b of buckets) {
      if (rank <= before + b.n) {
        const j = rank - before - 1;
        if (j === 0) return b.lo;
        if (j === b.n - 1) return b.hi;
        return (b.lo + b.hi) / 2;
      }
      before += b.n;
    }
    throw new Error('rank beyond the histogram');
  };
  const low = Math.floor((total + 1) / 2);
  const high = Math.floor((total + 2) / 2);
  return low === high ? at(low) : (at(low) + at(high)) / 2;
}

/** The histogram of a batch's cell (sparse): bucket → its count, smallest and largest value. */
export type Histogram = Map<number, Bucket>;

/** Adds `n` values from lo to hi, all in bucket `bucket`, to `h`. */
export function addBucket(h: Histogram, bucket: number, n: number, lo: number, hi: number): void {
  const b = h.get(bucket);
  if (b === undefined) h.set(bucket, { bucket, n, lo, hi });
  else {
    b.n += n;
    if (lo < b.lo) b.lo = lo;
    if (hi > b.hi) b.hi = hi;
  }
}

export function addDuration(h: Histogram, ms: number): void {
  addBucket(h, bucketOf(ms), 1, ms, ms);
}

export function addHistogram(h: Histogram, from: Histogram): void {
  for (const b of from.values()) addBucket(h, b.bucket, b.n, b.lo, b.hi);
}

/** Every bucket a duration can have: NEGATIVE … 1.02^2045 ms (2^53 ms is bucket 1852); larger ones share the last. */
const SLOTS = 2048;
const slotOf = (bucket: number): number => Math.min(bucket - NEGATIVE, SLOTS - 1);

/** The two stored formats: varints (the usual case: whole milliseconds) or float64 little-endian. */
const VARINTS = 1;
const FLOATS = 2;
const wholeNumber = (v: number): boolean => Number.isSafeInteger(v) && v >= 0;

/**
 * A histogram with a slot per bucket, for adding many up quickly (a window's rows, or a stored
 * row and a batch's cell). Stored (encode) by bucket: when every count and value is a whole
 * number, a VARINTS byte then per bucket the varints of (zigzag) bucket − previous bucket, n, lo,
 * hi − lo (about 5 bytes a bucket); otherwise a FLOATS byte then float64 little-endian quadruples
 * (bucket, n, lo, hi).
 */
export class DenseHistogram {
  private readonly n = new Float64Array(SLOTS);
  private readonly lo = new Float64Array(SLOTS);
  private readonly hi = new Float64Array(SLOTS);

  clear(): void {
    this.n.fill(0);
  }

  add(bucket: number, n: number, lo: number, hi: number): void {
    const i = slotOf(bucket);
    if (this.n[i] === 0) {
      this.n[i] = n;
      this.lo[i] = lo;
      this.hi[i] = hi;
    } else {
      this.n[i] = (this.n[i] as number) + n;
      if (lo < (this.lo[i] as number)) this.lo[i] = lo;
      if (hi > (this.hi[i] as number)) this.hi[i] = hi;
    }
  }

  addValue(ms: number): void {
    this.add(bucketOf(ms), 1, ms, ms);
  }

  addSparse(h: Histogram): void {
    for (const b of h.values()) this.add(b.bucket, b.n, b.lo, b.hi);
  }

  /** Adds a stored histogram (encode's format). */
  addStored(blob: Uint8Array): void {
    if (blob.length === 0) return;
    if (blob[0] === FLOATS) {
      const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
      for (let i = 1; i + 32 <= blob.length; i += 32)
        this.add(view.getFloat64(i, true), view.getFloat64(i + 8, true), view.getFloat64(i + 16, true), view.getFloat64(i + 24, true));
      return;
    }
    let i = 1;
    const next = (): number => {
      let v = 0;
      let scale = 1;
      for (;;) {
        const byte = blob[i++] as number;
        v += (byte & 0x7f) * scale;
        if (byte < 0x80) return v;
        scale *= 128;
      }
    };
    let bucket = 0;
    while (i < blob.length) {
      const delta = next();
      bucket += delta % 2 === 0 ? delta / 2 : -(delta + 1) / 2;
      const n = next();
      const lo = next();
      this.add(bucket, n, lo, lo + next());
    }
  }

  /** The occupied buckets in ascending order. */
  buckets(): Bucket[] {
    const out: Bucket[] = [];
    for (let i = 0; i < SLOTS; i++)
      if ((this.n[i] as number) > 0) out.push({ bucket: i + NEGATIVE, n: this.n[i] as number, lo: this.lo[i] as number, hi: this.hi[i] as number });
    return out;
  }

  encode(): Buffer {
    const buckets = this.buckets();
    if (!buckets.every((b) => wholeNumber(b.n) && wholeNumber(b.lo) && wholeNumber(b.hi))) {
      const out = Buffer.alloc(1 + buckets.length * 32);
      out[0] = FLOATS;
      buckets.forEach((b, i) => [b.bucket, b.n, b.lo, b.hi].forEach((v, j) => out.writeDoubleLE(v, 1 + i * 32 + j * 8)));
      return out;
    }
    const out = Buffer.allocUnsafe(1 + buckets.length * 4 * 8);
    let at = 0;
    out[at++] = VARINTS;
    const put = (value: number): void => {
      let v = value;
      while (v >= 0x80) {
        out[at++] = (v % 0x80) + 0x80;
        v = Math.floor(v / 0x80);
      }
      out[at++] = v;
    };
    let previous = 0;
    for (const b of buckets) {
      const delta = b.bucket - previous;
      put(delta >= 0 ? delta * 2 : -delta * 2 - 1);
      put(b.n);
      put(b.lo);
      put(b.hi - b.lo);
      previous = b.bucket;
    }
    return Buffer.from(out.subarray(0, at));
  }

  median(): number | null {
    return medianFromBuckets(this.buckets());
  }
}
