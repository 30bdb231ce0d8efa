/** Writing for people: colour only on a terminal and never with NO_COLOR. */
export interface Painter {
  ok(text: string): string;
  bad(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

export function useColour(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && env.NO_COLOR === undefined && env.TERM !== 'dumb';
}

export function painter(enabled: boolean): Painter {
  const wrap = (code: number) => (text: string) => (enabled ? `\u001b[${code}m${text}\u001b[0m` : text);
  return { ok: wrap(32), bad: wrap(31), dim: wrap(2), bold: wrap(1) };
}

/** Left-aligned columns, two spaces apart; the last column is not padded. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function writeJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Text from a file made safe for a terminal: C0/C1 control characters and bidi overrides (which
 * could move the cursor, recolour or reorder what the user reads) are shown as \u escapes.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A reader that stops early (`forge-reflect bounce … | head -1`) closes the pipe; the next write
 * then fails with EPIPE, and every write after it with ERR_STREAM_DESTROYED. Those end the output
 * quietly: no stack trace, the rest of the output is dropped, and the command finishes with the
 * status it would have had. Any other stream error stays loud. Installed once, by main().
 */
const guarded = new WeakSet<NodeJS.WritableStream>();

export function endQuietlyOnClosedPipe(streams: readonly NodeJS.WritableStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    if (guarded.has(stream)) continue;
    guarded.add(stream);
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    });
  }
}
