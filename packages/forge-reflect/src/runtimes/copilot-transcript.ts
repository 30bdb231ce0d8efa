/**
 * The final answer in GitHub Copilot CLI's transcript (`session-state/<id>/events.jsonl`, the Stop
 * payload's transcript_path): one JSON object a line, `{"type","data","id","timestamp","parentId"}`;
 * the agent's messages are `type: "assistant.message"` with the text in `data.content` and the tool
 * calls it asks for in `data.toolRequests`. The answer that ends a turn asks for none, and comes
 * after the turn's `user.message`. Pure: text in.
 *
 * Copilot can run the Stop hook before that last line is written (its writer lags the hook), so the
 * caller reads again, bounded, until `final` is true. A tail with no line of this format (a changed
 * format, another runtime's file) is `recognised: false`: no self-report, never an error.
 */

export interface CopilotAnswer {
  /** The text of the last assistant.message, or null. */
  answer: string | null;
  /** That message asks for no tool: the turn's final answer is written. */
  final: boolean;
  /** At least one complete line had Copilot's `type` + `data` shape. */
  recognised: boolean;
}

/** Whether `path` looks like Copilot's transcript (`…/session-state/<id>/events.jsonl`). */
export function isCopilotTranscript(path: string): boolean {
  return /\/session-state\/[^/]+\/events\.jsonl$/.test(path);
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * The last assistant message of a transcript tail. The first line of a tail is usually cut and is
 * skipped when it does not parse; so is any other line that does not.
 */
export function copilotAnswerFromTail(tail: string): CopilotAnswer {
  const lines = tail.split('\n');
  let recognised = false;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]?.trim();
    if (!line || line[0] !== '{') continue;
    let raw: Record<string, unknown> | undefined;
    try {
      raw = record(JSON.parse(line));
    } catch {
      continue;
    }
    const data = record(raw?.data);
    if (typeof raw?.type !== 'string' || data === undefined) continue;
    recognised = true;
    // The prompt of a turn whose answer is not written yet: an earlier answer is not this turn's.
    if (raw.type === 'user.message') return { answer: null, final: false, recognised };
    if (raw.type !== 'assistant.message') continue;
    if (typeof data.content !== 'string') return { answer: null, final: false, recognised };
    const requests = data.toolRequests;
    const final = requests === undefined || (Array.isArray(requests) && requests.length === 0);
    return { answer: data.content, final, recognised };
  }
  return { answer: null, final: false, recognised };
}
