// Big repositories for the bench, built once with `git fast-import` and kept outside the kit's
// repository (FORGE_BENCH_CACHE, default ~/.cache/forge-reflect/bench): a checkout of 10^6 files
// takes minutes, and each bench run only changes a handful of files and puts them back.
//
// fixtureRepo(files) returns the path of a repository of `files` tracked files whose work tree is
// checked out and clean. A fixture whose build was interrupted is built again: the folder is
// renamed into place only once its checkout is complete.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const cacheRoot = () => process.env.FORGE_BENCH_CACHE || join(homedir(), '.cache', 'forge-reflect', 'bench');

// Bump when the layout changes: an old fixture is then built again under the new name.
const LAYOUT = 'v1';
// A shape like a real source tree: ~20 files a folder, ~50 folders a parent, a few named areas
// the risk floor knows (so the floor's regexes run as they do in a real repository).
const PER_DIR = 20;
const PER_PARENT = 50;
const AREAS = ['src', 'lib', 'docs', 'test', 'packages'];

/** The repo-relative path of tracked file number i. */
export function fixturePath(i) {
  const dir = Math.floor(i / PER_DIR);
  const parent = Math.floor(dir / PER_PARENT);
  return `${AREAS[parent % AREAS.length]}/m${parent}/d${dir}/f${i}.ts`;
}

function stream(files, out) {
  return new Promise((resolve, reject) => {
    out.on('error', reject);
    const chunks = [];
    let size = 0;
    const flush = (force) => {
      if (size === 0 || (!force && size < 1 << 20)) return true;
      const ok = out.write(chunks.join(''));
      chunks.length = 0;
      size = 0;
      return ok;
    };
    const push = (text) => {
      chunks.push(text);
      size += text.length;
    };
    push('commit refs/heads/main\ncommitter bench <bench@example.com> 1700000000 +0000\ndata 5\nbase\n');
    const ignore = 'node_modules/\n*.log\n';
    push(`M 100644 inline .gitignore\ndata ${Buffer.byteLength(ignore)}\n${ignore}`);
    let i = 0;
    const more = () => {
      while (i < files) {
        const body = `export const v${i} = ${i};\n`;
        push(`M 100644 inline ${fixturePath(i)}\ndata ${Buffer.byteLength(body)}\n${body}`);
        i += 1;
        if (!flush(false)) {
          out.once('drain', more);
          return;
        }
      }
      flush(true);
      out.end('done\n', resolve);
    };
    more();
  });
}

/** Builds (once) and returns a clean checkout of `files` tracked files. */
export async function fixtureRepo(files, { log = () => {} } = {}) {
  const root = cacheRoot();
  const dir = join(root, `repo-${LAYOUT}-${files}`);
  if (existsSync(join(dir, '.git', 'forge-bench-complete'))) return dir;
  mkdirSync(root, { recursive: true });
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  log(`building a fixture of ${files.toLocaleString('en-US')} tracked files in ${dir} (once)`);
  const git = (...a) => execFileSync('git', a, { cwd: building, stdio: ['ignore', 'ignore', 'inherit'] });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'bench@example.com');
  git('config', 'user.name', 'bench');
  git('config', 'gc.auto', '0');
  const importer = spawn('git', ['fast-import', '--quiet', '--done'], { cwd: building, stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => importer.on('close', resolve));
  await stream(files, importer.stdin);
  if ((await exited) !== 0) throw new Error('git fast-import failed building the bench fixture');
  // The checkout writes every file and the index with their stat data, so the first status after
  // it does not read every file again.
  git('reset', '-q', '--hard', 'main');
  git('status', '--porcelain');
  execFileSync('sh', ['-c', ': >.git/forge-bench-complete'], { cwd: building });
  rmSync(dir, { recursive: true, force: true });
  renameSync(building, dir);
  return dir;
}
