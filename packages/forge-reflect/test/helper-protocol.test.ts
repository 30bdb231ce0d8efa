// The Stop hook's facts for its Node helper (src/helper/protocol.ts): the hook sends exactly the
// named facts and the end record, the helper reads no other name, and parseFacts keeps only them.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { END_RECORD, FACTS, parseFacts } from '../src/helper/protocol.js';

const KIT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const read = (rel: string) => readFileSync(join(KIT, rel), 'utf8');
const HELPER = 'packages/forge-reflect/src/helper';
const END = END_RECORD.slice(0, END_RECORD.indexOf('='));

/** Every `FORGE_H_NAME=` the text assigns or sends. */
const sent = (text: string) => new Set([...text.matchAll(/\b(FORGE_H_[A-Z0-9_]+)=/g)].map((m) => m[1]));
/** Every FORGE_H_ name the text mentions. */
const named = (text: string) => new Set([...text.matchAll(/\b(FORGE_H_[A-Z0-9_]+)/g)].map((m) => m[1]));

describe('the helper protocol', () => {
  it('has each fact once', () => {
    expect(new Set(FACTS).size).toBe(FACTS.length);
  });

  it('is what the Stop hook sends: every named fact, the end record, nothing else', () => {
    expect([...sent(read('hooks/reflect-stop-hook.sh'))].sort()).toEqual([...FACTS, END].sort());
  });

  it('is what the helper reads: no name outside it, and every fact used', () => {
    // Every module of the helper but the protocol itself, which names them all.
    const source = readdirSync(join(KIT, HELPER))
      .filter((name) => name.endsWith('.ts') && name !== 'protocol.ts')
      .map((name) => read(`${HELPER}/${name}`))
      .join('\n');
    const mentioned = named(source);
    for (const name of mentioned) expect([...FACTS, END], name).toContain(name);
    for (const fact of FACTS) expect(mentioned.has(fact), fact).toBe(true);
  });

  it('parses NUL-separated records, keeping only named facts', () => {
    const text =
      ['FORGE_H_OUT=/tmp/a b', 'FORGE_H_BLIND=line one\nline=two', 'FORGE_H_UNKNOWN=x', 'PATH=/bin', 'no equals sign', '=empty name', ''].join('\0') +
      END_RECORD;
    expect(parseFacts(text)).toEqual({ FORGE_H_OUT: '/tmp/a b', FORGE_H_BLIND: 'line one\nline=two' });
  });

  it('keeps an empty value and the last of a repeated fact', () => {
    expect(parseFacts('FORGE_H_LOCK=\0FORGE_H_MODE=solo\0FORGE_H_MODE=orchestrated\0')).toEqual({ FORGE_H_LOCK: '', FORGE_H_MODE: 'orchestrated' });
  });
});
