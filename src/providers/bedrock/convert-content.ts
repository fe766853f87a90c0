import { malformed, unsupportedFor } from '../request-errors.ts';
import { isRecord, type ContentBlock } from './wire.ts';

const imageFormats = new Set(['png', 'jpeg', 'gif', 'webp']);
/** Converse document formats, by the media type a data URL names. */
const documentFormats: Readonly<Record<string, string>> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

/** A request the target cannot honour: 400 naming the field and the instance. */
export const unsupported = unsupportedFor('bedrock');

export { malformed };

/**
 * OpenAI message content (a string, null, or an array of parts) as Converse blocks: text,
 * base64 images (`data:` URLs; Bedrock fetches no URL) and documents (`file` parts with
 * `file_data`). A part's `cache_control` becomes a `cachePoint` block after it.
 */
export function convertContent(content: unknown, param: string, provider: string): ContentBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) throw malformed(`${param} must be a string or an array of content parts`, param);
  return content.flatMap((part: unknown, index) => {
    const partParam = `${param}[${index}]`;
    if (!isRecord(part)) throw malformed(`${partParam} must be a content part object`, partParam);
    const block = convertPart(part, partParam, provider);
    return isRecord(part['cache_control']) ? [block, { cachePoint: { type: 'default' } }] : [block];
  });
}

function convertPart(part: Record<string, unknown>, param: string, provider: string): ContentBlock {
  switch (part['type']) {
    case 'text':
    case 'input_text':
    case 'refusal': {
      const text = part['type'] === 'refusal' ? part['refusal'] : part['text'];
      if (typeof text !== 'string') throw malformed(`${param} must carry its text as a string`, param);
      return { text };
    }
    case 'image_url':
    case 'input_image':
      return imageBlock(part['image_url'], param, provider);
    case 'file':
      return documentBlock(part['file'], param, provider);
    default:
      throw unsupported(`content part type ${JSON.stringify(part['type'])}`, `${param}.type`, provider);
  }
}

interface DataUrl {
  mediaType: string;
  data: string;
}

function parseDataUrl(url: string): DataUrl | null {
  const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return match === null ? null : { mediaType: (match[1] ?? '').toLowerCase(), data: match[2] ?? '' };
}

function imageBlock(image: unknown, param: string, provider: string): ContentBlock {
  const url = isRecord(image) ? image['url'] : image;
  if (typeof url !== 'string') throw malformed(`${param}.image_url.url must be a string`, `${param}.image_url`);
  const parsed = parseDataUrl(url);
  if (parsed === null) throw unsupported('an image by URL (send it as a base64 data: URL)', `${param}.image_url.url`, provider);
  const format = parsed.mediaType.replace(/^image\//, '').replace('jpg', 'jpeg');
  if (!parsed.mediaType.startsWith('image/') || !imageFormats.has(format)) {
    throw unsupported(`image type ${parsed.mediaType}`, `${param}.image_url.url`, provider);
  }
  return { image: { format, source: { bytes: parsed.data } } };
}

function documentBlock(file: unknown, param: string, provider: string): ContentBlock {
  const data = isRecord(file) ? file['file_data'] : undefined;
  if (typeof data !== 'string') throw unsupported('a file part without file_data (file ids)', `${param}.file`, provider);
  const parsed = parseDataUrl(data);
  const format = parsed === null ? undefined : documentFormats[parsed.mediaType];
  if (parsed === null || format === undefined) throw unsupported('this document type', `${param}.file.file_data`, provider);
  const filename = isRecord(file) && typeof file['filename'] === 'string' ? file['filename'] : '';
  return { document: { format, name: documentName(filename), source: { bytes: parsed.data } } };
}

/** Bedrock allows letters, digits, single spaces, hyphens, parentheses and brackets in a document name. */
export function documentName(filename: string): string {
  const stem = filename.replace(/\.[A-Za-z0-9]+$/, '');
  const cleaned = stem
    .replace(/[^A-Za-z0-9\s\-()[\]]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned === '' ? 'document' : cleaned.slice(0, 200);
}
