#!/usr/bin/env node
// spool-records: reads the records of the spool log (spool/events.log, or a sealed spool/*.seg) for
// the bats suites. Independent of the drain (packages/forge-reflect/src/log/spool-log.ts) on purpose:
// it is the test's own reading of docs/spool-format.md, and it is strict, so a broken writer fails a
// test instead of being read around.
//
//   spool-records extract OUTDIR FILE...
//     Every record of every FILE becomes OUTDIR/<id>.event, shaped like a spool file: the record's
//     envelope exactly as written, `\n`, then the payload bytes exactly. Prints nothing. Anything
//     that is not a whole, well-formed record (wrong framing, a payload longer or shorter than its
//     `bytes`, a missing final newline, a record start inside the payload, an envelope that is not
//     the hook's, two records with one id) is an error: a message on stderr, exit 1, and OUTDIR may
//     hold only some of the records. A payload may hold newlines (a many-line payload is a record
//     too); the record's last byte is always one.
//
//   spool-records scan OUTDIR FILE
//     For a log that a full disk or a kill may have cut: a record may end early (a torn write), but
//     only where the next record starts (`\x1e`) or at the end of FILE. Whole records are extracted
//     as above; each prints `whole <offset> <id>`, each torn one `torn <offset> <length>`. Anything
//     else (bytes outside a record, a whole-length record that is malformed, a torn piece that is no
//     prefix of a record) is an error, as above. A torn piece is taken only when its payload part
//     holds no newline: the suites that tear records send one-line payloads, so a newline there
//     means a wrong `bytes`, not a cut.
//
//   In both, a run of zero bytes where a record could start is what a drain left of records it
//   committed (it overwrites them: docs/spool-format.md) and is stepped over.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RS = 0x1e;
const US = 0x1f;
const NL = 0x0a;
// The hook's FORGE_APPEND_MAX: no record it appends is longer (4,000 bytes; 1,000 in the stock-Mac
// pass, whose hooks run with OSTYPE darwin: tests/helpers/hooks.bash sets it).
const MAX_RECORD = Number(process.env.FORGE_TEST_SPOOL_RECORD_MAX || 4000);
const ID = /^([0-9]{16})-([0-9]+)-[0-9a-f]{8}$/;
const KEYS = ['v', 'source', 'event', 'runtime', 'received_us', 'pid', 'cwd', 'cap', 'bytes', 'id'];
const utf8 = new TextDecoder('utf-8', { fatal: true });

class Malformed extends Error {}

/** The envelope's text, checked: the hook's fields, no others, consistent with each other. */
function checkEnvelope(bytes) {
  for (const b of bytes) if (b === NL || b === RS || b === US) throw new Malformed(`a control byte 0x${b.toString(16)} in the envelope`);
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new Malformed('the envelope is not UTF-8');
  }
  let env;
  try {
    env = JSON.parse(text);
  } catch {
    throw new Malformed(`the envelope is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (env === null || typeof env !== 'object' || Array.isArray(env)) throw new Malformed('the envelope is not a JSON object');
  const keys = Object.keys(env);
  if (keys.join(',') !== KEYS.join(',')) throw new Malformed(`envelope keys ${keys.join(',')}, want ${KEYS.join(',')}`);
  if (env.v !== 1 || env.source !== 'event-hook') throw new Malformed(`envelope v ${env.v}, source ${env.source}`);
  if (!Number.isSafeInteger(env.bytes) || env.bytes < 0) throw new Malformed(`envelope "bytes" is ${JSON.stringify(env.bytes)}`);
  for (const k of ['received_us', 'pid', 'cap'])
    if (!Number.isSafeInteger(env[k]) || env[k] <= 0) throw new Malformed(`envelope "${k}" is ${JSON.stringify(env[k])}`);
  for (const k of ['event', 'runtime', 'cwd']) if (typeof env[k] !== 'string') throw new Malformed(`envelope "${k}" is not a string`);
  const m = typeof env.id === 'string' ? ID.exec(env.id) : null;
  if (!m) throw new Malformed(`envelope "id" is ${JSON.stringify(env.id)}`);
  if (Number(m[1]) !== env.received_us || Number(m[2]) !== env.pid)
    throw new Malformed(`id ${env.id} does not match received_us ${env.received_us} and pid ${env.pid}`);
  return { env, text };
}

/**
 * The record at `pos` of `buf`, which must start there. Returns
 *   { kind: 'whole', end, id, envelope: Buffer, payload: Buffer }, or
 *   { kind: 'torn', end } when `torn` is allowed and the record is cut short (the bytes up to the
 *   next record start or the end of buf are a strict prefix of a record),
 * and throws Malformed for anything else.
 */
function recordAt(buf, pos, torn) {
  if (buf[pos] !== RS) throw new Malformed(`bytes outside a record (0x${buf[pos].toString(16)} where a record should start)`);
  let next = buf.indexOf(RS, pos + 1);
  if (next < 0) next = buf.length;
  const cut = () => {
    if (!torn) throw new Malformed(`a record cut short (${next - pos} bytes, then ${next === buf.length ? 'the end of the file' : 'another record'})`);
    return { kind: 'torn', end: next };
  };
  const sep = buf.indexOf(US, pos + 1);
  if (sep < 0 || sep > next) {
    // No \x1f before the next record: a torn envelope, if what there is could begin one.
    if (buf.subarray(pos + 1, next).includes(NL)) throw new Malformed('a newline in an envelope without its \\x1f');
    return cut();
  }
  const { env } = checkEnvelope(buf.subarray(pos + 1, sep));
  const payloadEnd = sep + 1 + env.bytes;
  // The record's one newline: the payload's own last byte, else the byte after the payload.
  const ownNewline = env.bytes > 0 && payloadEnd <= next && buf[payloadEnd - 1] === NL;
  const end = ownNewline ? payloadEnd : payloadEnd + 1;
  if (end > next) {
    // Shorter than its envelope says. A torn write leaves a prefix: no newline in what is there.
    if (buf.subarray(sep + 1, next).includes(NL)) throw new Malformed(`a payload shorter than its ${env.bytes} bytes ends in a newline (a wrong "bytes")`);
    return cut();
  }
  const payload = buf.subarray(sep + 1, payloadEnd);
  if (payload.includes(RS)) throw new Malformed('a record start (\\x1e) inside the payload');
  if (!ownNewline && buf[payloadEnd] !== NL) throw new Malformed(`no newline after the ${env.bytes} payload bytes (0x${buf[payloadEnd].toString(16)})`);
  if (end !== next)
    throw new Malformed(`${next - end} bytes after the record's newline before ${next === buf.length ? 'the end of the file' : 'the next record'}`);
  if (end - pos > MAX_RECORD) throw new Malformed(`a record of ${end - pos} bytes, more than the ${MAX_RECORD} the hook appends`);
  return { kind: 'whole', end, id: env.id, envelope: buf.subarray(pos + 1, sep), payload };
}

function writeRecord(outdir, rec) {
  const file = join(outdir, `${rec.id}.event`);
  if (existsSync(file)) throw new Malformed(`two records with the id ${rec.id}`);
  writeFileSync(file, Buffer.concat([rec.envelope, Buffer.from('\n'), rec.payload]), { flag: 'wx', mode: 0o600 });
}

function main(argv) {
  const [command, outdir, ...files] = argv;
  if (!['extract', 'scan'].includes(command) || !outdir || files.length === 0 || (command === 'scan' && files.length !== 1)) {
    process.stderr.write('usage: spool-records extract OUTDIR FILE... | spool-records scan OUTDIR FILE\n');
    return 2;
  }
  mkdirSync(outdir, { recursive: true });
  const torn = command === 'scan';
  const out = [];
  for (const file of files) {
    let buf;
    try {
      buf = readFileSync(file);
    } catch (error) {
      process.stderr.write(`spool-records: cannot read ${file}: ${error.code ?? error.message}\n`);
      return 1;
    }
    let pos = 0;
    while (pos < buf.length) {
      if (buf[pos] === 0) {
        pos += 1;
        continue;
      }
      let rec;
      try {
        rec = recordAt(buf, pos, torn);
        if (rec.kind === 'whole') writeRecord(outdir, rec);
      } catch (error) {
        if (!(error instanceof Malformed)) throw error;
        process.stderr.write(`spool-records: ${file} at byte ${pos}: ${error.message}\n`);
        return 1;
      }
      out.push(rec.kind === 'whole' ? `whole ${pos} ${rec.id}` : `torn ${pos} ${rec.end - pos}`);
      pos = rec.end;
    }
  }
  if (torn && out.length > 0) process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
