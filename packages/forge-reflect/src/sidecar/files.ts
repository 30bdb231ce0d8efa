/**
 * How the Stop hook names a sidecar: `<UTC time>-<session>-<unique>.reflection.json`. Its temp
 * files start with `.tmp-`, so a name starting with `.` is never a (complete) sidecar.
 */
export const SIDECAR_SUFFIX = '.reflection.json';

export function isSidecarName(name: string): boolean {
  return name.endsWith(SIDECAR_SUFFIX) && !name.startsWith('.');
}
