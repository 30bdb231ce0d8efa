/** The kit as a user gets it: `npm pack` of this checkout, once per run. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KIT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The tarball path; FORGE_E2E_TARBALL (set by the global setup) when it was packed already. */
export function packKit(): string {
  const given = process.env.FORGE_E2E_TARBALL;
  if (given && existsSync(given)) return given;
  const out = mkdtempSync(join(tmpdir(), 'forge-reflect-pack-'));
  execFileSync('npm', ['pack', '--pack-destination', out, '--loglevel=error'], { cwd: KIT_ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
  const tarball = readdirSync(out).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${out}`);
  process.env.FORGE_E2E_TARBALL = join(out, tarball);
  return process.env.FORGE_E2E_TARBALL;
}
