/**
 * JSON.stringify that survives any nesting depth. V8's JSON.parse is iterative, but its
 * JSON.stringify recurses and throws a RangeError a few thousand levels down; a hook payload (a
 * hostile one, or a tool's deeply nested output) must still be storable and printable.
 */

type Frame = { kind: 'array'; items: unknown[]; next: number } | { kind: 'object'; record: Record<string, unknown>; keys: string[]; next: number };

function leaf(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'object':
      return undefined;
    default:
      return 'null'; // undefined, functions, symbols, bigint: never in parsed JSON
  }
}

/** Compact JSON of a value from JSON.parse, with an explicit stack instead of recursion. */
export function stringifyIteratively(value: unknown): string {
  const first = leaf(value);
  if (first !== undefined) return first;
  const parts: string[] = [];
  const stack: Frame[] = [];
  const open = (node: object) => {
    if (Array.isArray(node)) {
      parts.push('[');
      stack.push({ kind: 'array', items: node, next: 0 });
    } else {
      parts.push('{');
      const record = node as Record<string, unknown>;
      stack.push({ kind: 'object', record, keys: Object.keys(record), next: 0 });
    }
  };
  open(value as object);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    if (frame.kind === 'array') {
      if (frame.next >= frame.items.length) {
        parts.push(']');
        stack.pop();
        continue;
      }
      if (frame.next > 0) parts.push(',');
      const item = frame.items[frame.next++];
      const text = leaf(item);
      if (text !== undefined) parts.push(text);
      else open(item as object);
    } else {
      if (frame.next >= frame.keys.length) {
        parts.push('}');
        stack.pop();
        continue;
      }
      if (frame.next > 0) parts.push(',');
      const key = frame.keys[frame.next++] as string;
      const item = frame.record[key];
      parts.push(JSON.stringify(key), ':');
      const text = leaf(item);
      if (text !== undefined) parts.push(text);
      else open(item as object);
    }
  }
  return parts.join('');
}

/** JSON.stringify (indented when asked), falling back to compact iterative output when too deep. */
export function safeStringify(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent);
  } catch (error) {
    if (error instanceof RangeError) return stringifyIteratively(value);
    throw error;
  }
}
