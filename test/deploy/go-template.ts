import { createHash, randomBytes } from 'node:crypto';
import { stringify } from 'yaml';

// A subset of Go's text/template with the Sprig/Helm functions the chart uses, so that its
// templates render in a test where no `helm` binary exists (Helm is not in Debian). It is no
// Helm: it knows exactly the actions and functions deploy/helm/model-gateway uses (if, else if,
// else, with, range over lists and maps, define, include, comments, trim markers; the functions
// in `functions` below) and throws on anything else, so a template using more fails loudly
// instead of rendering wrongly. Where `helm` is on PATH the chart test uses helm itself.
// Variables (`$x := ...`) are visible from their declaration to the end of the template file or
// define they are in (Go limits them to the enclosing block; the chart declares none it reuses
// outside one). `lookup` answers from the `cluster` given to the renderer: the objects already
// in the cluster, as `helm install`/`upgrade` sees them (`helm template` sees none).

type Value = unknown;
type Scope = { dot: Value; root: Value; vars: Map<string, Value> };

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipeline: string }
  | { kind: 'if'; branches: Array<{ pipeline: string; body: Node[] }>; otherwise: Node[] }
  | { kind: 'with'; pipeline: string; body: Node[] }
  | { kind: 'range'; pipeline: string; variables: string[]; body: Node[] };

/** Helm's `fail`: the message is the render's error. */
export class TemplateFailure extends Error {}

/** Splits text into text and action tokens, applying `{{-` and `-}}` trimming; drops comments. */
function lex(source: string): Array<{ text: string } | { action: string }> {
  const tokens: Array<{ text: string } | { action: string }> = [];
  const pattern = /\{\{(-\s)?([\s\S]*?)(\s-)?\}\}/g;
  let last = 0;
  let trimNext = false;
  for (const match of source.matchAll(pattern)) {
    let text = source.slice(last, match.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (match[1] !== undefined) text = text.replace(/\s+$/, '');
    tokens.push({ text });
    const action = (match[2] ?? '').trim();
    if (!action.startsWith('/*')) tokens.push({ action });
    trimNext = match[3] !== undefined;
    last = (match.index ?? 0) + match[0].length;
  }
  let rest = source.slice(last);
  if (trimNext) rest = rest.replace(/^\s+/, '');
  tokens.push({ text: rest });
  return tokens;
}

/** Parses tokens into nodes; `define` blocks go to `defines`. */
function parse(tokens: ReturnType<typeof lex>, defines: Map<string, Node[]>): Node[] {
  let index = 0;
  const block = (): { nodes: Node[]; end: string } => {
    const nodes: Node[] = [];
    while (index < tokens.length) {
      const token = tokens[index++];
      if (token === undefined) break;
      if ('text' in token) {
        if (token.text !== '') nodes.push({ kind: 'text', text: token.text });
        continue;
      }
      const [keyword = '', ...restWords] = token.action.split(/\s+/);
      const rest = token.action.slice(keyword.length).trim();
      if (keyword === 'end' || keyword === 'else') return { nodes, end: token.action };
      if (keyword === 'if') nodes.push(parseIf(rest));
      else if (keyword === 'with') nodes.push({ kind: 'with', pipeline: rest, body: expectEnd(block()) });
      else if (keyword === 'range') {
        const declared = /^(\$\w+)\s*,\s*(\$\w+)\s*:=\s*(.*)$/.exec(rest);
        const variables = declared ? [declared[1] ?? '', declared[2] ?? ''] : [];
        nodes.push({ kind: 'range', pipeline: declared ? (declared[3] ?? '') : rest, variables, body: expectEnd(block()) });
      } else if (keyword === 'define') {
        defines.set(JSON.parse(restWords.join(' ')) as string, expectEnd(block()));
      } else nodes.push({ kind: 'action', pipeline: token.action });
    }
    return { nodes, end: '' };
  };
  const expectEnd = ({ nodes, end }: { nodes: Node[]; end: string }): Node[] => {
    if (end !== 'end') throw new Error(`unsupported block ending {{ ${end} }}`);
    return nodes;
  };
  const parseIf = (first: string): Node => {
    const branches: Array<{ pipeline: string; body: Node[] }> = [];
    let pipeline = first;
    for (;;) {
      const { nodes, end } = block();
      branches.push({ pipeline, body: nodes });
      if (end === 'end') return { kind: 'if', branches, otherwise: [] };
      if (end === 'else') return { kind: 'if', branches, otherwise: expectEnd(block()) };
      if (!end.startsWith('else if ')) throw new Error(`unclosed if: ${first}`);
      pipeline = end.slice('else if '.length).trim();
    }
  };
  const { nodes, end } = block();
  if (end !== '') throw new Error(`unexpected {{ ${end} }}`);
  return nodes;
}

/** Splits an action into terms: strings, parenthesised groups, pipes and words. */
function terms(pipeline: string): string[] {
  const found: string[] = [];
  const pattern = /"(?:[^"\\]|\\.)*"|\(|\)|\||[^\s()|]+/g;
  for (const match of pipeline.matchAll(pattern)) found.push(match[0]);
  return found;
}

export const truthy = (value: Value): boolean => {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
};

function toText(value: Value): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function toYaml(value: Value): string {
  if (value === null || value === undefined) return 'null';
  return stringify(value, { sortMapEntries: true, lineWidth: 0 }).replace(/\n$/, '');
}

const indent = (spaces: number, text: string): string =>
  text
    .split('\n')
    .map((line) => ' '.repeat(spaces) + line)
    .join('\n');

/** Objects `lookup` finds: `apiVersion/kind/namespace/name` -> the object. */
export type Cluster = ReadonlyMap<string, Record<string, unknown>>;

export const clusterKey = (apiVersion: string, kind: string, namespace: string, name: string): string =>
  `${apiVersion}/${kind}/${namespace}/${name}`;

const alphaNum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export class ChartRenderer {
  private readonly defines = new Map<string, Node[]>();
  private readonly files = new Map<string, Node[]>();

  private readonly basePath: string;
  private readonly cluster: Cluster;

  /** `templates`: file name (`deployment.yaml`, `_helpers.tpl`) -> source; `basePath`: `<chart>/templates`. */
  constructor(templates: ReadonlyMap<string, string>, basePath: string, cluster: Cluster = new Map()) {
    this.basePath = basePath;
    this.cluster = cluster;
    for (const [file, source] of templates) this.files.set(`${basePath}/${file}`, parse(lex(source), this.defines));
  }

  /** Renders one template file with `root` as `.` (Values, Release, Chart, Template). */
  render(file: string, root: Record<string, unknown>): string {
    const nodes = this.files.get(`${this.basePath}/${file}`);
    if (nodes === undefined) throw new Error(`no template ${file}`);
    return this.run(nodes, { dot: root, root, vars: new Map() });
  }

  private run(nodes: readonly Node[], scope: Scope): string {
    let out = '';
    for (const node of nodes) out += this.node(node, scope);
    return out;
  }

  private node(node: Node, scope: Scope): string {
    switch (node.kind) {
      case 'text':
        return node.text;
      case 'action': {
        const declaration = /^(\$\w+)\s*:=\s*([\s\S]+)$/.exec(node.pipeline);
        if (declaration === null) return toText(this.pipeline(node.pipeline, scope));
        scope.vars.set(declaration[1] ?? '', this.pipeline(declaration[2] ?? '', scope));
        return '';
      }
      case 'if': {
        const branch = node.branches.find((candidate) => truthy(this.pipeline(candidate.pipeline, scope)));
        return this.run(branch?.body ?? node.otherwise, scope);
      }
      case 'with': {
        const value = this.pipeline(node.pipeline, scope);
        return truthy(value) ? this.run(node.body, { ...scope, dot: value }) : '';
      }
      case 'range': {
        const value = this.pipeline(node.pipeline, scope);
        if (!truthy(value)) return '';
        const entries: Array<[Value, Value]> = Array.isArray(value)
          ? value.map((item, position) => [position, item])
          : Object.keys(value as object)
              .sort()
              .map((key) => [key, (value as Record<string, Value>)[key]]);
        return entries
          .map(([key, item]) => {
            const vars = new Map(scope.vars);
            if (node.variables.length === 2) vars.set(node.variables[0] ?? '', key).set(node.variables[1] ?? '', item);
            return this.run(node.body, { ...scope, dot: item, vars });
          })
          .join('');
      }
    }
  }

  private pipeline(source: string, scope: Scope): Value {
    return this.evaluate(terms(source), scope);
  }

  /** A pipeline of terms: commands separated by `|`, each result passed as the next one's last argument. */
  private evaluate(list: readonly string[], scope: Scope): Value {
    const commands: string[][] = [[]];
    let depth = 0;
    for (const term of list) {
      if (term === '(') depth += 1;
      if (term === ')') depth -= 1;
      if (term === '|' && depth === 0) commands.push([]);
      else commands.at(-1)?.push(term);
    }
    let piped: Value[] = [];
    for (const command of commands) piped = [this.command(command, scope, piped)];
    return piped[0];
  }

  private command(command: readonly string[], scope: Scope, piped: Value[]): Value {
    const args: Value[] = [];
    let name: string | null = null;
    for (let index = 0; index < command.length; index += 1) {
      const term = command[index] ?? '';
      if (term === '(') {
        let depth = 1;
        const start = index + 1;
        while (depth > 0) {
          index += 1;
          if (command[index] === '(') depth += 1;
          if (command[index] === ')') depth -= 1;
        }
        args.push(this.evaluate(command.slice(start, index), scope));
      } else if (index === 0 && /^[a-zA-Z]\w*$/.test(term)) name = term;
      else args.push(this.term(term, scope));
    }
    args.push(...piped);
    if (name === null) {
      if (args.length !== 1) throw new Error(`cannot evaluate ${command.join(' ')}`);
      return args[0];
    }
    return this.call(name, args, scope);
  }

  private term(term: string, scope: Scope): Value {
    if (term.startsWith('"')) return JSON.parse(term) as string;
    if (/^-?\d+$/.test(term)) return Number(term);
    if (term === 'true' || term === 'false') return term === 'true';
    if (/^[a-zA-Z]\w*$/.test(term)) return this.call(term, [], scope); // a niladic function as an argument: `default dict`
    let base: Value;
    let path: string;
    if (term.startsWith('$')) {
      const [variable = '', ...fields] = term.split('.');
      base = variable === '$' ? scope.root : scope.vars.get(variable);
      path = fields.join('.');
    } else if (term.startsWith('.')) {
      base = scope.dot;
      path = term.slice(1);
    } else throw new Error(`unsupported term ${term}`);
    return path === '' ? base : path.split('.').reduce<Value>((node, key) => (node as Record<string, Value> | null)?.[key], base);
  }

  private call(name: string, args: Value[], scope: Scope): Value {
    const text = (index: number): string => toText(args[index]);
    switch (name) {
      case 'include': {
        const nodes = this.defines.get(text(0)) ?? this.files.get(text(0));
        if (nodes === undefined) throw new Error(`no template named ${text(0)}`);
        return this.run(nodes, { dot: args[1], root: scope.root, vars: new Map() });
      }
      case 'fail':
        throw new TemplateFailure(text(0));
      case 'toYaml':
        return toYaml(args[0]);
      case 'nindent':
        return `\n${indent(Number(args[0]), text(1))}`;
      case 'indent':
        return indent(Number(args[0]), text(1));
      case 'quote':
        return JSON.stringify(text(0));
      case 'default':
        return truthy(args[1]) ? args[1] : args[0];
      case 'printf':
      case 'print': {
        if (name === 'print') return args.map(toText).join('');
        let next = 1;
        return text(0).replace(/%[sd]/g, () => text(next++));
      }
      case 'trunc':
        return text(1).slice(0, Number(args[0]));
      case 'trimSuffix':
        return text(1).endsWith(text(0)) ? text(1).slice(0, -text(0).length) : text(1);
      case 'replace':
        return text(2).split(text(0)).join(text(1));
      case 'contains':
        return text(1).includes(text(0));
      case 'sha256sum':
        return createHash('sha256').update(text(0)).digest('hex');
      case 'lookup': {
        const found = this.cluster.get(clusterKey(text(0), text(1), text(2), text(3)));
        return found === undefined ? {} : structuredClone(found);
      }
      case 'get': {
        const map = args[0];
        const value = typeof map === 'object' && map !== null ? (map as Record<string, Value>)[text(1)] : undefined;
        return value ?? '';
      }
      case 'dict': {
        const made: Record<string, Value> = {};
        for (let index = 0; index + 1 < args.length; index += 2) made[text(index)] = args[index + 1];
        return made;
      }
      case 'randAlphaNum':
        return Array.from(randomBytes(Number(args[0])), (byte) => alphaNum[byte % alphaNum.length]).join('');
      case 'b64enc':
        return Buffer.from(text(0), 'utf8').toString('base64');
      case 'int':
        return Math.trunc(Number(args[0] ?? 0));
      case 'eq':
        return args[0] === args[1];
      case 'ne':
        return args[0] !== args[1];
      case 'gt':
        return Number(args[0]) > Number(args[1]);
      case 'not':
        return !truthy(args[0]);
      case 'and':
        return args.find((arg) => !truthy(arg)) ?? args.at(-1);
      case 'or':
        return args.find((arg) => truthy(arg)) ?? args.at(-1);
      default:
        throw new Error(`the chart renderer does not know the function ${name}`);
    }
  }
}
