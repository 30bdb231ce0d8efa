/**
 * Reading the P1 corpus: JSON Lines of {confidence, correct}. `correct` may be a boolean, 0/1 or
 * "true"/"false"; `confidence` a number in [0, 1]. Other fields are ignored. A bad row is skipped
 * and reported with its line number; blank lines are not rows.
 */
import type { Labelled } from './auc.js';

export interface BadRow {
  line: number;
  reason: string;
}

export interface ParsedCorpus {
  rows: Labelled[];
  bad: BadRow[];
}

export function parseCorrect(value: unknown): boolean | undefined {
  if (value === true || value === 1 || value === 'true') return true;
  if (value === false || value === 0 || value === 'false') return false;
  return undefined;
}

export function parseCorpus(text: string): ParsedCorpus {
  const rows: Labelled[] = [];
  const bad: BadRow[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      bad.push({ line, reason: 'not JSON' });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      bad.push({ line, reason: 'not a JSON object' });
      return;
    }
    const record = value as Record<string, unknown>;
    const confidence = record.confidence;
    if (typeof confidence !== 'number' || !Number.isFinite(confidence) || confidence < 0 || confidence > 1) {
      bad.push({ line, reason: `confidence must be a number from 0 to 1, got ${JSON.stringify(confidence) ?? 'nothing'}` });
      return;
    }
    const correct = parseCorrect(record.correct);
    if (correct === undefined) {
      bad.push({ line, reason: `correct must be true/false, 0/1 or "true"/"false", got ${JSON.stringify(record.correct) ?? 'nothing'}` });
      return;
    }
    rows.push({ confidence, correct });
  });
  return { rows, bad };
}
