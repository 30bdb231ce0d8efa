/**
 * Every relative link in README.md, CONTRIBUTING.md and docs/*.md points at a file or folder that
 * exists, and a `#anchor` (in the same file or another Markdown file) at one of its headings, slugged
 * as GitHub slugs them. Links inside code (fenced blocks, inline spans) are not links. The README's
 * length is held to the front door's budget (issue 39).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const README_MAX_LINES = 250;

function docs(): string[] {
  const inDocs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name));
  return [join(ROOT, 'README.md'), join(ROOT, 'CONTRIBUTING.md'), ...inDocs];
}

/** The text with fenced code blocks and inline code spans blanked out. */
function withoutCode(text: string): string {
  return withoutCodeBlocks(text)
    .split('\n')
    .map((line) => line.replace(/(`+)[^`]*?\1/g, ''))
    .join('\n');
}

/** GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen; repeats get -1, -2. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of withoutCodeBlocks(readFileSync(file, 'utf8')).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = (heading[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Fenced blocks blanked, inline code kept (a heading's code span is part of its anchor). */
function withoutCodeBlocks(text: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null && open) {
      fence = open[1] as string;
      out.push('');
    } else if (fence !== null) {
      if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') fence = null;
      out.push('');
    } else out.push(line);
  }
  return out.join('\n');
}

interface Link {
  file: string;
  target: string;
}

function linksOf(file: string): Link[] {
  const text = withoutCode(readFileSync(file, 'utf8'));
  const links: Link[] = [];
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, target: m[1] as string });
  for (const m of text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) links.push({ file, target: m[1] as string });
  return links;
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

describe('the docs', () => {
  const files = docs();

  it('finds the docs and their links', () => {
    expect(files.length).toBeGreaterThan(3);
    const relativeLinks = files.flatMap(linksOf).filter((l) => !isExternal(l.target));
    expect(relativeLinks.length).toBeGreaterThan(20);
  });

  it('every relative link points at an existing file, and every anchor at a heading', () => {
    const broken: string[] = [];
    for (const { file, target } of files.flatMap(linksOf)) {
      if (isExternal(target)) continue;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const dest = pathPart === '' ? file : resolve(dirname(file), pathPart);
      const where = `${relative(ROOT, file)}: ${target}`;
      if (!dest.startsWith(ROOT) || !existsSync(dest)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor !== null && anchor !== '' && statSync(dest).isFile() && dest.endsWith('.md') && !anchorsOf(dest).has(anchor)) {
        broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it(`README.md is a front door: at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });
});
