/** One line of a payload's error text for a note: control characters dropped, cut to `max`. */
function errorText(value: unknown, max: number): string {
  let text = '';
  if (typeof value === 'string') text = value;
  else if (value !== null && typeof value === 'object') {
    // Cline's `{name, message, stack}`: the name and message (the stack names the client's files).
    const { name, message } = value as Record<string, unknown>;
    text = [name, message].filter((part) => typeof part === 'string' && part !== '').join(': ');
  }
  text = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Why the turn has no final answer, when it ended on a model error: Claude Code's and Qwen Code's
 * StopFailure (its last_assistant_message is the API error's text, never the agent's answer),
 * Cline's TaskError (`hookName` agent_error), Copilot CLI's SessionEnd with reason "error" (no
 * Stop). Null for any other payload.
 */
export function errorEndNote(payload: string): string | null {
  // Every Stop comes through here: its payload is parsed a second time only when it may be one.
  const opencodeIdle = payload.includes('"session.idle"') && payload.includes('"error"');
  if (!opencodeIdle && !payload.includes('"StopFailure"') && !payload.includes('"agent_error"') && !payload.includes('"SessionEnd"')) return null;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (raw === null || typeof raw !== 'object') return null;
  let what: string;
  if (raw.hook_event_name === 'StopFailure') what = 'StopFailure';
  else if (raw.hookName === 'agent_error') what = 'TaskError';
  else if (raw.hook_event_name === 'SessionEnd' && raw.reason === 'error') what = 'Copilot CLI: ErrorOccurred, then SessionEnd with reason "error", no Stop';
  // The kit's opencode plugin puts the session.error it saw into the session.idle it sends.
  else if (opencodeIdle && raw.hook_event_name === 'session.idle' && typeof raw.error === 'string') what = 'opencode: session.error, then session.idle';
  else return null;
  // StopFailure's details are optional; its last_assistant_message is then the error as shown.
  const details = errorText(raw.error_details, 300) || (what === 'StopFailure' ? errorText(raw.last_assistant_message, 300) : '');
  const error = [errorText(raw.error, 100), details].filter((part) => part !== '').join(': ');
  return `the turn ended on an error (${what}${error ? `: ${error}` : ''}): there is no final answer`;
}
