import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/**
 * The kit's own root (the folder with schemas/, hooks/ and runtime/), from this built file. Every
 * path relative to the kit goes through here: this module sits at the top of dist/ and of
 * dist-bundle/ alike, so the same relative step holds for both.
 */
export function kitRoot(): string {
  return fileURLToPath(new URL('../../../', import.meta.url));
}

export function kitPath(...parts: string[]): string {
  return join(kitRoot(), ...parts);
}
