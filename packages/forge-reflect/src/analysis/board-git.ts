/**
 * P3 over task files kept in git (`--data-dir`): each file's status is read at every commit that
 * touched it (one `git log` and one `git cat-file --batch`, not a process per commit). A file
 * entering a done status completes its task; leaving it later reopens it; a `Revert "…"` commit
 * touching the file is a revert. Task files are JSON ({id?, status}) or text with a `status:` line
 * (YAML, Markdown front matter); the task id is the file's `id`, else its path.
 */
import { spawn, spawnSync } from 'node:child_process';
import { relative, resolve } from 'node:path';
import { UserError } from '../errors.js';
import { isDone, type BoardData } from './board.js';
import { parseRevert } from './commit-message.js';

export function readTaskFile(text: string): { id: string | null; status: string | null } {
  try {
    const doc = JSON.parse(text) as Record<string, unknown>;
    if (doc && typeof doc === 'object') {
      return { id: doc.id === undefined ? null : String(doc.id), status: typeof doc.status === 'string' ? doc.status : null };
    }
  } catch {
    // text, below
  }
  const status = /^status:\s*["']?([\w-]+)["']?\s*$/im.exec(text)?.[1] ?? null;
  const id = /^id:\s*["']?([^"'\n]+?)["']?\s*$/im.exec(text)?.[1] ?? null;
  return { id, status };
}

function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', ['-C', cwd, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0)
    throw new UserError(
      `git ${args[0]} failed in ${cwd}: ${(r.stderr ?? '').trim().split('\n')[0] ?? ''}; --data-dir must be a folder inside a git repository`,
    );
  return r.stdout;
}

function catFileBatch(top: string, specs: string[]): Promise<Array<string | null>> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', ['-C', top, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', () => {
      const out = Buffer.concat(chunks);
      const results: Array<string | null> = [];
      let pos = 0;
      for (let i = 0; i < specs.length; i++) {
        const nl = out.indexOf(10, pos);
        if (nl < 0) break;
        const header = out.subarray(pos, nl).toString('utf8');
        pos = nl + 1;
        const m = /^\S+ blob (\d+)$/.exec(header);
        if (!m) {
          results.push(null);
          continue;
        }
        const size = Number(m[1]);
        results.push(out.subarray(pos, pos + size).toString('utf8'));
        pos += size + 1;
      }
      resolvePromise(results);
    });
    child.stdin.end(specs.map((s) => `${s}\n`).join(''));
  });
}

export async function readDataDir(dir: string, data: BoardData): Promise<BoardData> {
  const abs = resolve(dir);
  const top = git(abs, ['rev-parse', '--show-toplevel']).trim();
  const rel = relative(top, abs) || '.';
  const log = git(top, ['log', '--reverse', '-z', '--format=%x1e%H%x1f%ct%x1f%B%x1f', '--name-status', '--no-renames', '--', rel]);
  interface Touch {
    sha: string;
    time: number;
    message: string;
    path: string;
    deleted: boolean;
  }
  const touches: Touch[] = [];
  for (const record of log.split('\u001e').slice(1)) {
    const [sha, ct, message, rest] = record.split('\u001f') as [string, string, string, string | undefined];
    const tokens = (rest ?? '').split('\0').map((t) => t.replace(/^\n+/, ''));
    for (let i = 0; i + 1 < tokens.length; i += 2) {
      const status = tokens[i] as string;
      if (status === '') {
        i--;
        continue;
      }
      touches.push({ sha, time: Number(ct) * 1000, message, path: tokens[i + 1] as string, deleted: status.startsWith('D') });
    }
  }
  const live = touches.filter((t) => !t.deleted);
  const blobs = await catFileBatch(
    top,
    live.map((t) => `${t.sha}:${t.path}`),
  );
  const contents = new Map<Touch, string | null>(live.map((t, i) => [t, blobs[i] ?? null]));
  const state = new Map<string, { id: string; done: boolean }>();
  const completed = new Map<string, number>();
  for (const t of touches) {
    const previous = state.get(t.path);
    const id = previous?.id ?? t.path;
    if (parseRevert(t.message)) data.events.push({ task: id, kind: 'revert', at: t.time, correct: false });
    if (t.deleted) continue;
    const text = contents.get(t) ?? null;
    if (text === null) continue;
    const parsed = readTaskFile(text);
    const taskId = parsed.id ?? id;
    const done = isDone(parsed.status);
    if (done && !previous?.done && !completed.has(taskId)) completed.set(taskId, t.time); // the first completion
    if (!done && previous?.done) data.events.push({ task: taskId, kind: 'reopened', at: t.time, correct: false });
    state.set(t.path, { id: taskId, done });
  }
  data.shapes.git_task_file = state.size;
  for (const [id, at] of completed) data.tasks.push({ id, completed_at: at });
  data.open += [...state.values()].filter((s) => !completed.has(s.id)).length;
  return data;
}
