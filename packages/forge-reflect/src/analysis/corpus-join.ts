/**
 * The P1 corpus from what the kit records: each outcome (`forge-reflect outcome`: task_ref,
 * correct, at) is joined to the last valid sidecar of the same task written at or before it that
 * has a self-reported confidence. A sidecar judged by several outcomes takes the latest one. Pure.
 */
export interface SidecarPoint {
  path: string;
  task_ref: string;
  /** Normalized ISO time. */
  ts: string;
  confidence: number;
}

export interface OutcomePoint {
  id: number;
  task_ref: string;
  correct: boolean;
  source: string;
  at: string;
}

export interface CorpusRow {
  confidence: number;
  correct: boolean;
  task_ref: string;
  sidecar: string;
  sidecar_ts: string;
  outcome_at: string;
  source: string;
}

export interface CorpusJoin {
  rows: CorpusRow[];
  outcomes: number;
  /** Outcomes with no earlier sidecar of their task carrying a confidence. */
  unmatched: number;
  /** Outcomes superseded by a later outcome on the same sidecar. */
  superseded: number;
}

/** Comparable instant of an ISO text (invalid → NaN). */
function ms(iso: string): number {
  return Date.parse(iso);
}

export function joinCorpus(sidecars: readonly SidecarPoint[], outcomes: readonly OutcomePoint[]): CorpusJoin {
  const byTask = new Map<string, SidecarPoint[]>();
  for (const s of sidecars) {
    let list = byTask.get(s.task_ref);
    if (!list) byTask.set(s.task_ref, (list = []));
    list.push(s);
  }
  for (const list of byTask.values()) list.sort((a, b) => ms(a.ts) - ms(b.ts) || a.path.localeCompare(b.path));
  const chosen = new Map<string, { sidecar: SidecarPoint; outcome: OutcomePoint }>();
  let unmatched = 0;
  let superseded = 0;
  for (const o of outcomes) {
    const at = ms(o.at);
    const list = byTask.get(o.task_ref) ?? [];
    let match: SidecarPoint | undefined;
    for (const s of list) if (ms(s.ts) <= at) match = s;
    if (!match) {
      unmatched++;
      continue;
    }
    const old = chosen.get(match.path);
    if (old) {
      superseded++;
      if (ms(old.outcome.at) > at || (ms(old.outcome.at) === at && old.outcome.id > o.id)) continue;
    }
    chosen.set(match.path, { sidecar: match, outcome: o });
  }
  const rows = [...chosen.values()]
    .sort((a, b) => ms(a.sidecar.ts) - ms(b.sidecar.ts) || a.sidecar.path.localeCompare(b.sidecar.path))
    .map(({ sidecar, outcome }) => ({
      confidence: sidecar.confidence,
      correct: outcome.correct,
      task_ref: sidecar.task_ref,
      sidecar: sidecar.path,
      sidecar_ts: sidecar.ts,
      outcome_at: outcome.at,
      source: outcome.source,
    }));
  return { rows, outcomes: outcomes.length, unmatched, superseded };
}
