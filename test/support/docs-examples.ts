// Reading the examples of a Markdown page for test/e2e/docs-examples.test.ts: its fenced
// blocks, and the curl command lines of its shell blocks.

export interface DocBlock {
  /** The info string's first word (`yaml`, `sh`, `json`, ...), lower case; '' when none. */
  lang: string;
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
}

export interface CurlExample {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, with the page's placeholders unexpanded. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  line: number;
  /** The JSON answer the page shows after the block (last curl of the block only). */
  shown?: unknown;
}

/** Every top-level fenced block of a page, in order. */
export function parseDocBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^```(\S*)/.exec(lines[index] ?? '');
    if (open === null) continue;
    const start = index;
    const body: string[] = [];
    for (index += 1; index < lines.length && !(lines[index] ?? '').startsWith('```'); index += 1) body.push(lines[index] ?? '');
    blocks.push({ lang: (open[1] ?? '').toLowerCase(), text: `${body.join('\n')}\n`, line: start + 1 });
  }
  return blocks;
}

/** Splits a shell line into words: quotes removed (their text kept as written), a `#` word ends the line. */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  for (let index = 0; index < command.length; index += 1) {
    const char = command[index] ?? '';
    if (char === "'" || char === '"') {
      const end = command.indexOf(char, index + 1);
      if (end < 0) throw new Error(`unclosed quote in: ${command}`);
      current += command.slice(index + 1, end);
      inWord = true;
      index = end;
    } else if (char === '#' && !inWord) {
      break; // a comment: the rest of the line
    } else if (/\s/.test(char)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += char;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}

const methods = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** The curl commands of a shell block (backslash continuations joined, comments dropped). */
export function parseCurl(block: string, blockLine: number): CurlExample[] {
  const examples: CurlExample[] = [];
  const rawLines = block.split('\n');
  const lines: Array<{ text: string; number: number }> = [];
  for (let index = 0; index < rawLines.length; index += 1) {
    const number = blockLine + 1 + index;
    let text = rawLines[index] ?? '';
    while (text.endsWith('\\') && index + 1 < rawLines.length) text = `${text.slice(0, -1)} ${rawLines[++index] ?? ''}`;
    lines.push({ text, number });
  }
  for (const { text: line, number: lineNumber } of lines) {
    const command = line.trim();
    if (!/^curl\s/.test(command)) continue;
    const words = shellWords(command).slice(1);
    let method: string | undefined;
    let url: string | undefined;
    let body: string | undefined;
    const headers: Record<string, string> = {};
    for (let index = 0; index < words.length; index += 1) {
      const word = words[index] ?? '';
      if (word === '-X' || word === '--request') method = words[++index];
      else if (word === '-H' || word === '--header') {
        const header = words[++index] ?? '';
        const colon = header.indexOf(':');
        headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
      } else if (word === '-d' || word === '--data' || word === '--data-raw') body = words[++index];
      else if (word.startsWith('http://') || word.startsWith('https://')) url = word;
      else if (!word.startsWith('-')) throw new Error(`curl at line ${lineNumber}: unexpected word ${word}`);
    }
    if (url === undefined) throw new Error(`curl at line ${lineNumber}: no URL`);
    const resolved = (method ?? (body === undefined ? 'GET' : 'POST')).toUpperCase();
    if (!methods.has(resolved)) throw new Error(`curl at line ${lineNumber}: method ${resolved}`);
    const path = url.replace(/^https?:\/\/[^/]+/, '') || '/';
    examples.push({ method: resolved as CurlExample['method'], path, headers, ...(body === undefined ? {} : { body }), line: lineNumber });
  }
  return examples;
}

/** Values that differ on every run: only their presence is compared. */
const volatile = new Set([
  'id',
  'key',
  'created',
  'created_at',
  'updated_at',
  'expires_at',
  'redacted',
  'content',
  'period_start',
  'period_end',
]);

/** Whether `answer` has every field `shown` shows, with the same value (volatile fields: present). */
export function matchesShown(answer: unknown, shown: unknown, field = ''): boolean {
  if (Array.isArray(shown)) {
    return Array.isArray(answer) && shown.every((item, index) => matchesShown(answer[index], item));
  }
  if (shown !== null && typeof shown === 'object') {
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return false;
    const record = answer as Record<string, unknown>;
    return Object.entries(shown).every(([name, value]) => name in record && matchesShown(record[name], value, name));
  }
  return volatile.has(field) || answer === shown;
}
