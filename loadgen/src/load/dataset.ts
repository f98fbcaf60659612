/**
 * A JSONL prompt dataset (`contract/scenario.ts` PromptLine, one a line): read and validated before the run, every
 * bad line reported as `file:line: field: message`.
 */
import { readFileSync } from 'node:fs';
import { formatZodError } from '../../../contract/zod-error';
import { PromptLine } from '../../../contract/scenario';
import { UsageError } from './errors';

const MAX_ISSUES = 10;

export function parseDataset(text: string, file: string): PromptLine[] {
  const lines: PromptLine[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('//')) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (err) {
      problems.push(`${file}:${i + 1}: not JSON (${(err as Error).message})`);
      return;
    }
    const r = PromptLine.safeParse(json);
    if (r.success) lines.push(r.data);
    else for (const issue of r.error.issues) problems.push(`${file}:${i + 1}: ${formatZodError({ issues: [issue] })}`);
  });
  if (problems.length) {
    const shown = problems.slice(0, MAX_ISSUES);
    if (problems.length > shown.length) shown.push(`… and ${problems.length - shown.length} more`);
    throw new UsageError(`bad prompt dataset ${file}:\n  ${shown.join('\n  ')}`);
  }
  if (!lines.length) throw new UsageError(`prompt dataset ${file} has no prompts`);
  return lines;
}

export function loadDataset(file: string): PromptLine[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read prompt dataset ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`
    );
  }
  return parseDataset(text, file);
}
