/**
 * Extra redaction patterns from `<state dir>/config.json`:
 *
 *   { "redact": { "patterns": [{ "kind": "employee_id", "regex": "EMP-\\d{6}" }] } }
 *
 * A missing file means none. A bad file, a bad entry or an invalid regex is skipped with one
 * warning line each; configuration never stops the log from being written.
 */
import { configPathOf } from '../state-dir.js';
import type { RedactionPattern, RedactionRules } from './redact.js';
import { readErrorText, readRegularText } from '../regular-file.js';

export type Warn = (message: string) => void;

export const warnOnStderr: Warn = (message) => {
  process.stderr.write(`forge-reflect: warning: ${message}\n`);
};

const KIND = /^[A-Za-z0-9_.-]{1,64}$/;
const FLAGS = /^[imsu]*$/;

/** Compiles the `redact.patterns` of a parsed config. Pure apart from the warnings. */
export function compileRedactionConfig(config: unknown, warn: Warn, where = 'config.json'): RedactionRules {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    warn(`${where} is not a JSON object; extra redaction patterns ignored`);
    return { extra: [] };
  }
  const redact = (config as Record<string, unknown>).redact;
  if (redact === undefined) return { extra: [] };
  const patterns = redact !== null && typeof redact === 'object' ? (redact as Record<string, unknown>).patterns : undefined;
  if (patterns === undefined) return { extra: [] };
  if (!Array.isArray(patterns)) {
    warn(`${where}: redact.patterns is not an array; extra redaction patterns ignored`);
    return { extra: [] };
  }
  const extra: RedactionPattern[] = [];
  patterns.forEach((entry: unknown, index) => {
    const at = `${where}: redact.patterns[${index}]`;
    const e = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
    const { kind, regex, flags } = e;
    if (typeof kind !== 'string' || !KIND.test(kind)) {
      warn(`${at} needs a "kind" of letters, digits, '_', '.' or '-' (e.g. "kind": "employee_id"); pattern ignored`);
      return;
    }
    if (typeof regex !== 'string' || regex === '') {
      warn(`${at} needs a non-empty "regex" string; pattern ignored`);
      return;
    }
    if (flags !== undefined && (typeof flags !== 'string' || !FLAGS.test(flags))) {
      warn(`${at}: "flags" may only hold i, m, s, u; pattern ignored`);
      return;
    }
    try {
      extra.push({ kind, regex: new RegExp(regex, `g${flags ?? ''}`) });
    } catch (error) {
      warn(`${at}: invalid regex ${JSON.stringify(regex)} (${(error as Error).message}); pattern ignored`);
    }
  });
  return { extra };
}

/** Reads `<state dir>/config.json` for redaction patterns; never throws. */
export function loadRedactionRules(stateDir: string, warn: Warn = warnOnStderr): RedactionRules {
  const path = configPathOf(stateDir);
  let text: string;
  try {
    text = readRegularText(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') warn(`cannot read ${path} (${readErrorText(error)}); extra redaction patterns ignored`);
    return { extra: [] };
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    warn(`${path} is not valid JSON; extra redaction patterns ignored`);
    return { extra: [] };
  }
  return compileRedactionConfig(config, warn, path);
}
