import { readCommittedSchemaText } from '../schema/validator.js';

export async function run(args: Record<string, unknown>): Promise<number> {
  process.stdout.write(readCommittedSchemaText(String(args.name ?? 'reflection.v1')));
  return 0;
}
