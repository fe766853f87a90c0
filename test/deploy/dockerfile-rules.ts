import { readFileSync } from 'node:fs';

/** One instruction of a Dockerfile, continuation lines joined. */
export interface Instruction {
  keyword: string;
  args: string;
  line: number;
  /** Index of the stage it belongs to (0 = first FROM). */
  stage: number;
}

/**
 * A small Dockerfile reader for the static checks of dockerfile.test.ts: comments and parser
 * directives dropped, `\` continuations joined, each instruction tagged with its stage.
 */
export function readDockerfile(path: string): Instruction[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const instructions: Instruction[] = [];
  let stage = -1;
  let pending = '';
  let start = 0;
  lines.forEach((raw, index) => {
    const text = raw.trim();
    if (pending === '' && (text === '' || text.startsWith('#'))) return;
    if (text.startsWith('#')) return;
    if (pending === '') start = index + 1;
    pending += ` ${text}`;
    if (text.endsWith('\\')) {
      pending = pending.slice(0, -1);
      return;
    }
    const match = /^\s*(\S+)\s*(.*)$/.exec(pending) ?? ['', '', ''];
    const keyword = (match[1] ?? '').toUpperCase();
    if (keyword === 'FROM') stage += 1;
    instructions.push({ keyword, args: (match[2] ?? '').replace(/\s+/g, ' ').trim(), line: start, stage });
    pending = '';
  });
  return instructions;
}

/** The default of each `ARG NAME=value` given before the first FROM. */
export function globalArgs(instructions: Instruction[]): Map<string, string> {
  const values = new Map<string, string>();
  for (const instruction of instructions) {
    if (instruction.stage >= 0) break;
    const found = /^(\w+)=(\S+)$/.exec(instruction.args);
    if (instruction.keyword === 'ARG' && found?.[1] && found[2]) values.set(found[1], found[2]);
  }
  return values;
}

/** The parsed JSON array of an exec-form instruction (CMD, ENTRYPOINT, HEALTHCHECK's CMD), or null for shell form. */
export function execForm(args: string): string[] | null {
  if (!args.startsWith('[')) return null;
  const parsed = JSON.parse(args) as unknown;
  return Array.isArray(parsed) && parsed.every((part) => typeof part === 'string') ? parsed : null;
}

/** Patterns of a .dockerignore, in order (`!` re-includes). */
export function dockerignoreIncludes(path: string, file: string): boolean {
  let included = true;
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    if (globMatches(negated ? line.slice(1) : line, file)) included = negated;
  }
  return included;
}

function globMatches(pattern: string, file: string): boolean {
  const part = (text: string): string =>
    text
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]');
  const source = pattern
    .split(/\*\*\/?/)
    .map(part)
    .join('.*');
  return new RegExp(`^${source}(/.*)?$`).test(file);
}
