/**
 * The changed files in `git status --porcelain=v2 -z --branch --untracked-files=normal --no-renames`
 * output: one git call gives the Stop hook the commit, the branch, and every changed path. Pure.
 *
 * `normal`, not `all`: git's untracked cache serves only the mode it was built for, its default, so
 * `all` would look at every folder of a big tree again. A new folder is then one record, `? dir/`;
 * it is returned in `untrackedDirs`, for the helper to list its files (untracked-dirs.ts).
 *
 * Against the session's snapshot index (`snapshot`), a path counts when the work tree differs from
 * the snapshot (the Y column) or is untracked: the X column then only compares HEAD with the
 * snapshot, which is what was there before the session. Against the user's own index (`head`: no
 * snapshot), a staged or an unstaged change counts too.
 */

export type StatusBase = 'snapshot' | 'head';

export interface StatusFiles {
  /**
   * The changed paths in the order git lists them (the sidecar's sorted list is sortedFiles of it:
   * git's order is nearly sorted already, and one sort there costs less than deduplicating here).
   */
  files: string[];
  /** The new folders (`? dir/`, with the slash) whose files git did not list one by one. */
  untrackedDirs: string[];
  /** `branch.oid`, or '' for a branch with no commit yet. */
  head: string;
  /** `branch.head`, or '' when detached. */
  branch: string;
}

export function changedFromStatus(status: string, base: StatusBase): StatusFiles {
  const files: string[] = [];
  const untrackedDirs: string[] = [];
  let head = '';
  let branch = '';
  // Record by record without splitting the text: only the paths become strings of their own
  // (faster than split('\0') on a large status).
  const end = status.length;
  let start = 0;
  while (start < end) {
    let stop = status.indexOf('\0', start);
    if (stop < 0) stop = end;
    const kind = status[start];
    if (kind === '#') {
      if (status.startsWith('# branch.oid ', start)) {
        const oid = status.slice(start + '# branch.oid '.length, stop);
        head = oid === '(initial)' ? '' : oid;
      } else if (status.startsWith('# branch.head ', start)) {
        const name = status.slice(start + '# branch.head '.length, stop);
        branch = name === '(detached)' ? '' : name;
      }
    } else if (kind === '?') {
      if (stop > start + 2) (status[stop - 1] === '/' ? untrackedDirs : files).push(status.slice(start + 2, stop));
    } else if (kind === '1' || kind === 'u') {
      // '2' (a rename) cannot occur with --no-renames.
      // `1 XY sub mH mI mW hH hI path` (8 fields before the path), `u XY sub m1 m2 m3 mW h1 h2 h3 path` (10).
      const fields = kind === '1' ? 8 : 10;
      let at = start;
      for (let i = 0; i < fields && at >= 0 && at < stop; i++) at = status.indexOf(' ', at + 1);
      if (at >= 0 && at < stop - 1) {
        const x = status[start + 2];
        const y = status[start + 3];
        if (kind === 'u' || y !== '.' || (base === 'head' && x !== '.')) files.push(status.slice(at + 1, stop));
      }
    }
    start = stop + 1;
  }
  return { files, untrackedDirs, head, branch };
}
