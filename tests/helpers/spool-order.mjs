#!/usr/bin/env node
// spool-order: when the events waiting in a spool were received, for the bats suites
// (docs/spool-format.md). An event's id is `<received µs:16>-<pid>-<rand>`; a hook without a clock
// (bash before 5: a Mac's 3.2) names its file with 16 zeros for the time and says "clock":"file" in
// the envelope, and the drain takes the time from the file's time of writing (its mtime, to the
// microsecond) and stores the id with that time in place of the zeros. Independent of the drain
// (packages/forge-reflect/src/log/spool-event.ts) on purpose, as tests/helpers/spool-records.mjs is.
//
//   spool-order sort
//     Reads paths of spool files and extracted records (`<id>.event`), each ended by a NUL, on
//     stdin; writes them back, each ended by a NUL, in the order received: by the time in the name,
//     or for 16 zeros by the file's mtime to the nanosecond, then by pid (a number), then by name.
//     Two files written in the same tick of the file system's clock (Linux keeps file times to the
//     kernel's tick, 4 ms on many machines; APFS to the nanosecond) fall to the pid: the later
//     process has the larger one but across a wrap of the pid counter.
//
//   spool-order ids FILE...
//     The id a drain stores for each FILE, one a line: the name without `.event`, or for 16 zeros
//     the name with the file's time of writing in place of them. A zero-named file whose envelope
//     does not say "clock":"file" (which the drain refuses) is an error: a message, exit 1.
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';

const NAME = /^([0-9]{16})-([0-9]+)-([0-9a-f]{4,8})\.event$/;
const ZEROS = '0000000000000000';

class Refused extends Error {}

/** The parts of a spool file's name; throws for a name that is not `<id>.event`. */
function partsOf(path) {
  const m = NAME.exec(basename(path));
  if (!m) throw new Refused(`${path}: the name is not <received_us:16>-<pid>-<rand>.event`);
  return { time: m[1], pid: BigInt(m[2]), rest: basename(path).slice(16, -'.event'.length) };
}

/** The file of a hook without a clock: its envelope must say so. */
function checkClockless(path) {
  const bytes = readFileSync(path);
  const nl = bytes.indexOf(0x0a);
  let env;
  try {
    env = JSON.parse(bytes.subarray(0, nl < 0 ? bytes.length : nl).toString('utf8'));
  } catch {
    throw new Refused(`${path}: the envelope is not JSON`);
  }
  if (env?.clock !== 'file') throw new Refused(`${path}: named with 16 zeros, but the envelope does not say "clock":"file"`);
  if (env.received_us !== 0) throw new Refused(`${path}: named with 16 zeros, but the envelope's received_us is ${JSON.stringify(env.received_us)}`);
}

/** When the event of `path` was received, in nanoseconds since the epoch. */
function receivedNs(path) {
  const { time } = partsOf(path);
  if (time !== ZEROS) return BigInt(time) * 1000n;
  return statSync(Buffer.from(path, 'latin1'), { bigint: true }).mtimeNs;
}

/** The id a drain stores for `path` (the rounding is the drain's: Math.round of mtimeMs × 1000). */
function drainedId(path) {
  const { time, rest } = partsOf(path);
  if (time !== ZEROS) return `${time}${rest}`;
  checkClockless(path);
  const us = Math.round(statSync(path).mtimeMs * 1000);
  return `${String(us).padStart(16, '0')}${rest}`;
}

function main(argv) {
  const [command, ...files] = argv;
  if (command === 'sort' && files.length === 0) {
    // Paths as bytes (latin1 keeps each byte as one character): a folder's name may hold any byte.
    const paths = readFileSync(0).toString('latin1').split('\0').slice(0, -1);
    const keyed = paths.map((path) => ({ path, ns: receivedNs(path), pid: partsOf(path).pid, name: basename(path) }));
    keyed.sort((a, b) =>
      a.ns !== b.ns ? (a.ns < b.ns ? -1 : 1) : a.pid !== b.pid ? (a.pid < b.pid ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    process.stdout.write(Buffer.from(keyed.map((k) => `${k.path}\0`).join(''), 'latin1'));
    return 0;
  }
  if (command === 'ids' && files.length > 0) {
    process.stdout.write(`${files.map(drainedId).join('\n')}\n`);
    return 0;
  }
  process.stderr.write('usage: spool-order sort <NUL-ended paths | spool-order ids FILE...\n');
  return 2;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof Refused) && error?.code === undefined) throw error;
  process.stderr.write(`spool-order: ${error.message}\n`);
  process.exitCode = 1;
}
