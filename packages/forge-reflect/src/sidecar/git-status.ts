/**
 * The changed files in `git status --porcelain=v2 -z --branch --untracked-files=all --no-renames`
 * output: one git call gives the Stop hook the commit, the branch, and every changed path. Pure.
 *
 * Against the session's snapshot index (`snapshot`), a path counts when the work tree differs from
 * the snapshot (the Y column) or is untracked: the X column then only compares HEAD with the
 * snapshot, which is what was there before the session. Against the user's own index (`head`: no
 * snapshot), a staged or an unstaged change counts too.
 */

export type StatusBase = 'snapshot' | 'head';

export interface StatusFiles {
  files: string[];
  /** `branch.oid`, or '' for a branch with no commit yet. */
  head: string;
  /** `branch.head`, or '' when detached. */
  branch: string;
}

export function changedFromStatus(status: string, base: StatusBase): StatusFiles {
  const files = new Set<string>();
  let head = '';
  let branch = '';
  const records = status.split('\0');
  for (const record of records) {
    if (record.startsWith('# branch.oid ')) {
      const oid = record.slice('# branch.oid '.length);
      head = oid === '(initial)' ? '' : oid;
      continue;
    }
    if (record.startsWith('# branch.head ')) {
      const name = record.slice('# branch.head '.length);
      branch = name === '(detached)' ? '' : name;
      continue;
    }
    const kind = record[0];
    if (kind === '?') {
      const path = record.slice(2);
      if (path !== '') files.add(path);
      continue;
    }
    if (kind !== '1' && kind !== 'u') continue; // '2' (a rename) cannot occur with --no-renames
    // `1 XY sub mH mI mW hH hI path` (8 fields before the path), `u XY sub m1 m2 m3 mW h1 h2 h3 path` (10).
    const fields = kind === '1' ? 8 : 10;
    let at = 0;
    for (let i = 0; i < fields && at >= 0; i++) at = record.indexOf(' ', at + 1);
    if (at < 0) continue;
    const path = record.slice(at + 1);
    const x = record[2];
    const y = record[3];
    const changed = kind === 'u' || y !== '.' || (base === 'head' && x !== '.');
    if (changed && path !== '') files.add(path);
  }
  return { files: [...files].sort(), head, branch };
}
