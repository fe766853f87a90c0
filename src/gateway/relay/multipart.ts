import { invalidRequest } from '../../errors/gateway-error.ts';

/**
 * A bounded reader and editor for `multipart/form-data` bodies (RFC 7578), enough for the
 * gateway to read the routing fields of an upload (`model`, `provider`) and hand the
 * upstream the same form with those fields changed. The file parts are never copied apart
 * or decoded: the edited form is the original bytes with a few ranges replaced.
 */

/** One part of a form, as offsets into the body it was read from. */
export interface FormPart {
  /** The `name` of its Content-Disposition, null when absent. */
  readonly name: string | null;
  /** The `filename`, null for a plain field. */
  readonly filename: string | null;
  /** Where the part's delimiter line starts. */
  readonly start: number;
  /** Where its content starts, after the blank line that ends its headers. */
  readonly contentStart: number;
  /** Where its content ends (the CRLF before the next delimiter). */
  readonly contentEnd: number;
  /** Where the next delimiter starts: [start, end) is the whole part. */
  readonly end: number;
}

export interface MultipartForm {
  readonly body: Buffer;
  readonly boundary: string;
  readonly parts: readonly FormPart[];
}

/** Bounds that keep a hostile form from costing more than a linear scan. */
export const multipartLimits = { maxParts: 1_000, maxHeaderBytes: 16 * 1024, maxFieldBytes: 64 * 1024 } as const;

const crlf = Buffer.from('\r\n');
const blankLine = Buffer.from('\r\n\r\n');

/** The boundary of a `multipart/form-data` content type; 400 for anything else. */
export function boundaryOf(contentType: string | undefined): string {
  const [type, ...parameters] = (contentType ?? '').split(';');
  if (type?.trim().toLowerCase() !== 'multipart/form-data') {
    throw malformed(`expected a multipart/form-data body, got ${contentType === undefined ? 'none' : JSON.stringify(type?.trim())}`);
  }
  for (const parameter of parameters) {
    const match = /^\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*$/i.exec(parameter);
    if (match) return (match[1] ?? match[2]) as string;
  }
  throw malformed('the multipart/form-data content type has no valid boundary');
}

/** Splits a form into its parts; 400 when it is not a well-formed form. */
export function readForm(body: Buffer, boundary: string): MultipartForm {
  const delimiter = Buffer.from(`--${boundary}`);
  const nextDelimiter = Buffer.from(`\r\n--${boundary}`);
  let position = body.indexOf(delimiter);
  // The first delimiter opens the body or follows a preamble that ends with CRLF.
  if (position === -1 || (position > 0 && !(body[position - 2] === 0x0d && body[position - 1] === 0x0a))) {
    throw malformed('the multipart body does not start with its boundary');
  }
  const parts: FormPart[] = [];
  for (;;) {
    let cursor = position + delimiter.length;
    if (body[cursor] === 0x2d && body[cursor + 1] === 0x2d) break; // the close delimiter `--boundary--`
    while (body[cursor] === 0x20 || body[cursor] === 0x09) cursor += 1; // transport padding
    if (!body.subarray(cursor, cursor + 2).equals(crlf)) throw malformed('a multipart delimiter is not followed by a line break');
    if (parts.length >= multipartLimits.maxParts) throw malformed(`the form has more than ${multipartLimits.maxParts} parts`);
    const headersEnd = body.indexOf(blankLine, cursor);
    if (headersEnd === -1 || headersEnd - cursor > multipartLimits.maxHeaderBytes)
      throw malformed('a multipart part has unreadable headers');
    const contentStart = headersEnd + blankLine.length;
    const contentEnd = body.indexOf(nextDelimiter, contentStart);
    if (contentEnd === -1) throw malformed('the multipart body ends before its closing boundary');
    const disposition = dispositionOf(body.toString('utf8', cursor + crlf.length, headersEnd));
    parts.push({ ...disposition, start: position, contentStart, contentEnd, end: contentEnd + crlf.length });
    position = contentEnd + crlf.length;
  }
  return { body, boundary, parts };
}

/** The text of the first field named `name`, or undefined; 400 when it is a file or too long. */
export function fieldOf(form: MultipartForm, name: string): string | undefined {
  const part = form.parts.find((candidate) => candidate.name === name);
  if (part === undefined) return undefined;
  if (part.filename !== null || part.contentEnd - part.contentStart > multipartLimits.maxFieldBytes) {
    throw invalidRequest(`the form field "${name}" must be a short text field`, { code: 'invalid_body', param: name });
  }
  return form.body.toString('utf8', part.contentStart, part.contentEnd);
}

export interface FormEdit {
  /** Fields whose content is replaced (every part of that name). */
  set?: Readonly<Record<string, string>>;
  /** Fields removed from the form. */
  drop?: readonly string[];
}

/** The same form, byte for byte, except for the edited fields; the boundary is kept. */
export function editForm(form: MultipartForm, edit: FormEdit): Buffer {
  const { body, parts } = form;
  const set = edit.set ?? {};
  const drop = new Set(edit.drop ?? []);
  const first = parts[0];
  if (first === undefined) return body;
  const pieces: Buffer[] = [body.subarray(0, first.start)];
  for (const part of parts) {
    if (part.name !== null && drop.has(part.name)) continue;
    const value = part.name !== null && Object.hasOwn(set, part.name) ? set[part.name] : undefined;
    if (value === undefined) {
      pieces.push(body.subarray(part.start, part.end));
      continue;
    }
    pieces.push(body.subarray(part.start, part.contentStart), Buffer.from(value, 'utf8'), body.subarray(part.contentEnd, part.end));
  }
  pieces.push(body.subarray((parts.at(-1) as FormPart).end));
  return Buffer.concat(pieces);
}

/** `name` and `filename` of a part's Content-Disposition header. */
function dispositionOf(headers: string): { name: string | null; filename: string | null } {
  for (const line of headers.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== 'content-disposition') continue;
    const value = line.slice(colon + 1);
    return { name: parameterOf(value, 'name'), filename: parameterOf(value, 'filename') };
  }
  return { name: null, filename: null };
}

/** A parameter of a header value, quoted (with `\` escapes) or as a bare token. */
function parameterOf(value: string, key: string): string | null {
  const pattern = new RegExp(`;\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i');
  const match = pattern.exec(value);
  if (!match) return null;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : (match[2] ?? '');
}

function malformed(message: string) {
  return invalidRequest(message, { code: 'invalid_body' });
}
