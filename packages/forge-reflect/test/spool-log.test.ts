// The spool log's framing (docs/spool-format.md, "The spool log"): `scanAt` reads what starts at a
// position of a segment's bytes: a whole record, bytes that are no record (up to the next `\x1e`),
// or the start of a record whose end is not there yet. And the names of sealed segments.
import { describe, expect, it } from 'vitest';
import { isSegmentName, MAX_RECORD_BYTES, scanAt, type Scan, sealedMsOf, segmentName } from '../src/log/spool-log.js';
import { spoolId, spoolRecord, type SpoolRecord } from './helpers/spool.js';

let clock = 1_763_806_500_000_000;

const PAYLOAD = '{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1"}';

/** A record as the hook appends it (event PostToolUse, cwd /repo); `envelope` may change or drop fields. */
function record(payload: string | Buffer, envelope?: (env: Record<string, unknown>) => Record<string, unknown>): SpoolRecord {
  return spoolRecord(payload, { event: 'PostToolUse', cwd: '/repo', envelope });
}

function scan(bytes: Buffer, pos = 0, limit = bytes.length): Scan {
  return scanAt(bytes, pos, limit);
}

/** Every scan from the start to the end of `bytes`, as a compact list. */
function scanAll(bytes: Buffer): Array<{ kind: string; at: number; end?: number; id?: string }> {
  const out: Array<{ kind: string; at: number; end?: number; id?: string }> = [];
  let pos = 0;
  while (pos < bytes.length) {
    const s = scanAt(bytes, pos, bytes.length);
    if (s.kind === 'partial') {
      out.push({ kind: 'partial', at: pos });
      break;
    }
    out.push(s.kind === 'record' ? { kind: 'record', at: pos, end: s.end, id: s.id } : { kind: s.kind, at: pos, end: s.end });
    expect(s.end, `progress at ${pos}`).toBeGreaterThan(pos);
    pos = s.end;
  }
  return out;
}

describe('scanAt: a whole record', () => {
  it('reads a record whose payload has no newline: the id, the envelope and the payload bounds, ending after its \\n', () => {
    const r = record(PAYLOAD);
    expect(r.bytes[r.bytes.length - 1]).toBe(0x0a);
    const s = scan(r.bytes);
    expect(s.kind).toBe('record');
    if (s.kind !== 'record') return;
    expect(s.id).toBe(r.id);
    expect(s.env).toMatchObject({
      v: 1,
      id: r.id,
      source: 'event-hook',
      event: 'PostToolUse',
      runtime: 'claude-code',
      received_us: r.receivedUs,
      pid: 4242,
      cwd: '/repo',
      bytes: r.payload.length,
      cap: 1_048_576,
    });
    expect(s.payloadStart).toBe(r.payloadAt);
    expect(s.payloadEnd).toBe(r.payloadAt + r.payload.length);
    expect(r.bytes.subarray(s.payloadStart, s.payloadEnd).toString()).toBe(PAYLOAD);
    expect(s.end).toBe(r.bytes.length);
  });

  it('reads a record whose payload ends in \\n with no extra \\n: the payload keeps its newline and the record ends there', () => {
    const r = record(`${PAYLOAD}\n`);
    // exactly one newline in the whole record, its last byte
    expect(r.bytes.filter((b) => b === 0x0a)).toHaveLength(1);
    expect(r.bytes[r.bytes.length - 1]).toBe(0x0a);
    const s = scan(r.bytes);
    expect(s.kind).toBe('record');
    if (s.kind !== 'record') return;
    expect(s.id).toBe(r.id);
    expect(s.payloadEnd).toBe(r.bytes.length);
    expect(r.bytes.subarray(s.payloadStart, s.payloadEnd).toString()).toBe(`${PAYLOAD}\n`);
    expect(s.end).toBe(r.bytes.length);
  });

  it('reads records one after another from where the last one ended, and only up to the limit given', () => {
    const a = record(PAYLOAD);
    const b = record(`${PAYLOAD}\n`);
    const c = record('{"x":1}');
    const all = Buffer.concat([a.bytes, b.bytes, c.bytes]);
    expect(scanAll(all)).toEqual([
      { kind: 'record', at: 0, end: a.bytes.length, id: a.id },
      { kind: 'record', at: a.bytes.length, end: a.bytes.length + b.bytes.length, id: b.id },
      { kind: 'record', at: a.bytes.length + b.bytes.length, end: all.length, id: c.id },
    ]);
    // bytes past the limit are not looked at: c cut by the limit is partial, though all of it is in the buffer
    expect(scan(all, a.bytes.length + b.bytes.length, all.length - 1)).toEqual({ kind: 'partial' });
  });
});

describe('scanAt: a record still being written', () => {
  it.each([
    ['without a newline in its payload', PAYLOAD],
    ['whose payload ends in \\n', `${PAYLOAD}\n`],
  ])('a record %s, cut at every byte, is partial (never garbage) until it is whole', (_how, payload) => {
    const before = record('{"before":true}');
    const r = record(payload);
    const all = Buffer.concat([before.bytes, r.bytes]);
    const at = before.bytes.length;
    for (let limit = at + 1; limit < all.length; limit++) {
      expect(scan(all, at, limit), `cut after ${limit - at} of ${r.bytes.length} bytes`).toEqual({ kind: 'partial' });
    }
    const whole = scan(all, at, all.length);
    expect(whole).toMatchObject({ kind: 'record', id: r.id, end: all.length });
  });
});

describe('scanAt: zeros a drain left (log/scrub.ts)', () => {
  it('steps over a run of zeros up to the next record, and up to the limit when none follows', () => {
    const r = record(PAYLOAD);
    const all = Buffer.concat([Buffer.alloc(300), r.bytes, Buffer.alloc(7)]);
    expect(scan(all)).toEqual({ kind: 'scrubbed', end: 300 });
    expect(scanAll(all)).toEqual([
      { kind: 'scrubbed', at: 0, end: 300 },
      { kind: 'record', at: 300, end: 300 + r.bytes.length, id: r.id },
      { kind: 'scrubbed', at: 300 + r.bytes.length, end: all.length },
    ]);
    expect(scan(all, 10, 20)).toEqual({ kind: 'scrubbed', end: 20 });
  });
});

describe('scanAt: bytes that are no record', () => {
  it('takes bytes before a record start as garbage ending exactly at the \\x1e, then reads the record', () => {
    const r = record(PAYLOAD);
    const junk = Buffer.from('not a record {"v":1}\n\x1f more junk');
    const all = Buffer.concat([junk, r.bytes]);
    const s = scan(all);
    expect(s).toMatchObject({ kind: 'garbage', end: junk.length, open: false });
    expect(scan(all, junk.length)).toMatchObject({ kind: 'record', id: r.id, end: all.length });
    expect(scanAll(all).map((x) => x.kind)).toEqual(['garbage', 'record']);
  });

  it('takes garbage with no record start after it as open, up to the limit', () => {
    const junk = Buffer.from('junk with no record start');
    expect(scan(junk)).toMatchObject({ kind: 'garbage', end: junk.length, open: true });
    expect(scan(junk, 3, 10)).toMatchObject({ kind: 'garbage', end: 10, open: true });
  });

  it('takes a record cut short inside its envelope, at every byte, as garbage ending at the next record, which then parses', () => {
    const cut = record(PAYLOAD);
    const next = record('{"next":1}');
    for (let k = 1; k < cut.payloadAt; k++) {
      // k bytes of the cut record: `\x1e` and k - 1 bytes of its envelope (the `\x1f` not among them)
      const all = Buffer.concat([cut.bytes.subarray(0, k), next.bytes]);
      const s = scan(all);
      expect(s.kind, `envelope cut after ${k} bytes`).toBe('garbage');
      if (s.kind !== 'garbage') continue;
      expect(s.end, `envelope cut after ${k} bytes`).toBe(k);
      expect(s.open).toBe(false);
      expect(scan(all, s.end)).toMatchObject({ kind: 'record', id: next.id, end: all.length });
    }
  });

  it('takes a record cut short inside its payload as garbage ending exactly at the next record, which then parses', () => {
    const cut = record(JSON.stringify({ session_id: 's', tool_response: { stdout: 'o'.repeat(400) } }));
    const next = record('{"session_id":"s","hook_event_name":"Stop"}');
    // cut points whose named end falls nowhere near a newline of the next record (the block below has those)
    for (const k of [0, 1, 10, 100, cut.payload.length - next.bytes.length - 5, cut.payload.length - 1]) {
      const head = cut.bytes.subarray(0, cut.payloadAt + k);
      const all = Buffer.concat([head, next.bytes]);
      const s = scan(all);
      expect(s, `payload cut after ${k} bytes`).toMatchObject({ kind: 'garbage', end: head.length, open: false });
      expect(scan(all, head.length)).toMatchObject({ kind: 'record', id: next.id, end: all.length });
    }
  });

  it('takes an envelope without "id" as garbage, and the next record parses', () => {
    const bad = record(PAYLOAD, ({ id: _id, ...e }) => e);
    const next = record('{"n":1}');
    const all = Buffer.concat([bad.bytes, next.bytes]);
    const s = scan(all);
    expect(s).toMatchObject({ kind: 'garbage', end: bad.bytes.length, open: false });
    if (s.kind === 'garbage') expect(s.reason).toMatch(/"id"/);
    expect(scan(all, bad.bytes.length)).toMatchObject({ kind: 'record', id: next.id });
  });

  it('takes an envelope whose "id" is no spool id as garbage', () => {
    const bad = record(PAYLOAD, (e) => ({ ...e, id: '../../etc/passwd' }));
    expect(scan(bad.bytes)).toMatchObject({ kind: 'garbage', end: bad.bytes.length });
  });

  it('takes an envelope without "bytes" as garbage, and the next record parses', () => {
    const bad = record(PAYLOAD, ({ bytes: _bytes, ...e }) => e);
    const next = record('{"n":2}');
    const all = Buffer.concat([bad.bytes, next.bytes]);
    const s = scan(all);
    expect(s).toMatchObject({ kind: 'garbage', end: bad.bytes.length, open: false });
    if (s.kind === 'garbage') expect(s.reason).toMatch(/bytes/);
    expect(scan(all, bad.bytes.length)).toMatchObject({ kind: 'record', id: next.id });
  });

  it('takes an envelope that is not JSON as garbage', () => {
    const next = record('{"n":3}');
    const bad = Buffer.from(`\x1e{"v":1,"id":\x1f${PAYLOAD}\n`);
    const all = Buffer.concat([bad, next.bytes]);
    expect(scan(all)).toMatchObject({ kind: 'garbage', end: bad.length, open: false });
    expect(scan(all, bad.length)).toMatchObject({ kind: 'record', id: next.id });
  });

  it(`takes "bytes" larger than ${MAX_RECORD_BYTES} (64 KiB) as garbage, not as a record still being written`, () => {
    expect(MAX_RECORD_BYTES).toBe(64 * 1024);
    for (const bytes of [MAX_RECORD_BYTES + 1, 10 * MAX_RECORD_BYTES]) {
      const bad = record(PAYLOAD, (e) => ({ ...e, bytes }));
      const s = scan(bad.bytes);
      expect(s, `bytes: ${bytes}`).toMatchObject({ kind: 'garbage' });
      if (s.kind === 'garbage') expect(s.reason).toMatch(/bytes/);
      const next = record('{"n":4}');
      const all = Buffer.concat([bad.bytes, next.bytes]);
      expect(scan(all)).toMatchObject({ kind: 'garbage', end: bad.bytes.length, open: false });
      expect(scan(all, bad.bytes.length)).toMatchObject({ kind: 'record', id: next.id });
    }
    // and exactly 64 KiB is still a length a record may name: short of it, it is partial
    const edge = record(PAYLOAD, (e) => ({ ...e, bytes: MAX_RECORD_BYTES }));
    expect(scan(edge.bytes)).toEqual({ kind: 'partial' });
  });

  it('takes a record start with no \\x1f within 64 KiB as garbage, not partial', () => {
    const long = Buffer.concat([Buffer.from('\x1e{"v":1,"junk":"'), Buffer.alloc(MAX_RECORD_BYTES + 10, 0x61)]);
    expect(scan(long)).toMatchObject({ kind: 'garbage', open: true, end: long.length });
    // while shorter than that, it may still become a record
    expect(scan(long, 0, 1000)).toEqual({ kind: 'partial' });
  });

  it('takes a record with a wrong byte after its payload as garbage ending at the next record, which then parses', () => {
    const r = record(PAYLOAD);
    const wrongEnd = Buffer.from(r.bytes);
    wrongEnd[wrongEnd.length - 1] = 0x20; // a space where its \n belongs
    const next = record('{"n":5}');
    const all = Buffer.concat([wrongEnd, next.bytes]);
    const s = scan(all);
    expect(s).toMatchObject({ kind: 'garbage', end: wrongEnd.length, open: false });
    expect(scan(all, s.kind === 'garbage' ? s.end : 0)).toMatchObject({ kind: 'record', id: next.id, end: all.length });
    // a payload one byte longer than its envelope says is the same: its last byte sits where the \n belongs
    const longer = Buffer.from(`\x1e${JSON.stringify({ v: 1, id: spoolId((clock += 11)), bytes: 5 })}\x1f{"a":1}\n`);
    const both = Buffer.concat([longer, next.bytes]);
    expect(scan(both)).toMatchObject({ kind: 'garbage', end: longer.length });
    expect(scan(both, longer.length)).toMatchObject({ kind: 'record', id: next.id });
  });
});

// A record cut short inside its payload whose named length happens to end on a later record's
// newline must still be garbage up to the next record start (an early scanAt took it as one record
// spanning the next, and the drain then rejected that whole, valid next record with it).
describe("scanAt: a record cut short whose named end lands on the next record's newline", () => {
  it("minimal: cut record whose named length ends exactly on the next record's \\n is garbage up to the next record", () => {
    const cut = record(JSON.stringify({ a: 'x'.repeat(300) }));
    const next = record('{"n":1}');
    for (const k of [cut.payload.length - next.bytes.length, cut.payload.length - next.bytes.length + 1]) {
      const head = cut.bytes.subarray(0, cut.payloadAt + k);
      const all = Buffer.concat([head, next.bytes]);
      expect(scan(all), `payload cut after ${k} of ${cut.payload.length} bytes`).toMatchObject({ kind: 'garbage', end: head.length, open: false });
    }
  });

  it('sweep: takes a record cut short inside its payload, at every byte, as garbage ending at the next record, which then parses', () => {
    // The cut record's payload is longer than the record after it, so the length its envelope names
    // reaches into (and past) the next record at some cut points.
    const cut = record(JSON.stringify({ session_id: 's', hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_response: { stdout: 'o'.repeat(400) } }));
    const next = record('{"session_id":"s","hook_event_name":"Stop"}');
    expect(cut.payload.length).toBeGreaterThan(next.bytes.length + 1);
    const wrong: string[] = [];
    for (let k = 0; k < cut.payload.length; k++) {
      const head = cut.bytes.subarray(0, cut.payloadAt + k);
      const all = Buffer.concat([head, next.bytes]);
      const s = scan(all);
      const after = s.kind === 'garbage' ? scan(all, s.end) : undefined;
      const ok = s.kind === 'garbage' && s.end === head.length && !s.open && after?.kind === 'record' && after.id === next.id && after.end === all.length;
      if (!ok)
        wrong.push(
          `payload cut after ${k} of ${cut.payload.length} bytes: ${JSON.stringify({ kind: s.kind, end: 'end' in s ? s.end : undefined })}, next record at ${head.length}`,
        );
    }
    expect(wrong).toEqual([]);
  });

  it('sweep: takes a record cut short inside its payload and followed by several records as garbage up to the first of them', () => {
    const cut = record(JSON.stringify({ a: 'x'.repeat(1000) }));
    const rest = Array.from({ length: 8 }, (_, i) => record(JSON.stringify({ i, pad: 'y'.repeat(i * 9) })));
    const wrong: string[] = [];
    for (let k = 0; k < cut.payload.length; k += 1) {
      const head = cut.bytes.subarray(0, cut.payloadAt + k);
      const all = Buffer.concat([head, ...rest.map((r) => r.bytes)]);
      const scans = scanAll(all);
      const want = [
        { kind: 'garbage', at: 0, end: head.length },
        ...rest.map((r, i) => ({
          kind: 'record',
          at: head.length + rest.slice(0, i).reduce((n, x) => n + x.bytes.length, 0),
          end: undefined as number | undefined,
          id: r.id,
        })),
      ];
      const got = scans.map((x) => ({ kind: x.kind, at: x.at, id: x.id }));
      const expected = want.map((x) => ({ kind: x.kind, at: x.at, id: 'id' in x ? x.id : undefined }));
      if (JSON.stringify(got) !== JSON.stringify(expected)) wrong.push(`cut after ${k}: ${JSON.stringify(got.slice(0, 3))}`);
    }
    expect(wrong).toEqual([]);
  });

  it('invariant: never returns a record whose payload holds another record start', () => {
    // whatever the lengths, a \x1e inside what a record claims as its payload means it was cut short
    const next = record('{"k":"v"}');
    for (let declared = 1; declared <= next.bytes.length + 4; declared++) {
      const head = Buffer.from(`\x1e${JSON.stringify({ v: 1, id: spoolId((clock += 11)), bytes: declared })}\x1f`);
      const all = Buffer.concat([head, next.bytes]);
      const s = scan(all);
      if (s.kind === 'record') expect(all.subarray(s.payloadStart, s.payloadEnd).includes(0x1e), `bytes: ${declared}`).toBe(false);
      if (s.kind === 'garbage') expect(s.end, `bytes: ${declared}`).toBe(head.length);
    }
  });
});

describe('segment names', () => {
  it('isSegmentName: 16 digits, a dash, a pid of up to 10 digits, .seg', () => {
    expect(isSegmentName('1763806500123456-4242.seg')).toBe(true);
    expect(isSegmentName('0000000000000001-1.seg')).toBe(true);
    expect(isSegmentName('1763806500123456-4294967295.seg')).toBe(true);
    for (const name of [
      'events.log',
      '1763806500123456-4242.event',
      '176380650012345-4242.seg',
      '17638065001234567-4242.seg',
      '1763806500123456-12345678901.seg',
      '1763806500123456-.seg',
      '1763806500123456-4242.seg.tmp',
      '.1763806500123456-4242.seg',
      'x763806500123456-4242.seg',
      '1763806500123456_4242.seg',
      '../1763806500123456-4242.seg',
    ]) {
      expect(isSegmentName(name), name).toBe(false);
    }
  });

  it('sealedMsOf: the milliseconds of the name, 0 for no segment name', () => {
    expect(sealedMsOf('1763806500123456-4242.seg')).toBe(1_763_806_500_123);
    expect(sealedMsOf('1763806500123999-1.seg')).toBe(1_763_806_500_123);
    expect(sealedMsOf('0000000000001000-1.seg')).toBe(1);
    expect(sealedMsOf('events.log')).toBe(0);
    expect(sealedMsOf('1763806500123456-4242.event')).toBe(0);
  });

  it('segmentName: 16 zero-padded digits of whole microseconds and the pid, which reads back', () => {
    expect(segmentName(1_763_806_500_123_456, 4242)).toBe('1763806500123456-4242.seg');
    expect(segmentName(42, 7)).toBe('0000000000000042-7.seg');
    expect(segmentName(42.9, 1)).toBe('0000000000000042-1.seg'); // whole microseconds, not rounded up
    const name = segmentName(1_763_806_512_345_678, process.pid);
    expect(isSegmentName(name)).toBe(true);
    expect(sealedMsOf(name)).toBe(1_763_806_512_345);
    // names sort by time
    expect([segmentName(1_763_806_600_000_000, 1), segmentName(999_999_999_999_999, 99999), segmentName(1_763_806_500_000_000, 2)].sort()).toEqual([
      segmentName(999_999_999_999_999, 99999),
      segmentName(1_763_806_500_000_000, 2),
      segmentName(1_763_806_600_000_000, 1),
    ]);
  });
});
