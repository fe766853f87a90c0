import { malformed, unsupportedFor } from '../request-errors.ts';
import { isRecord, type DocumentBlock, type ImageBlock, type ImageSource, type TextBlock } from './wire.ts';

/** Blocks a user (or tool) turn may carry. */
export type InputBlock = TextBlock | ImageBlock | DocumentBlock;

const imageMediaTypes = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** A request the target cannot honour: 400 naming the field and the instance (field ladder rule 5). */
export const unsupported = unsupportedFor('anthropic');

export { malformed };

/**
 * OpenAI message content (a string, null, or an array of parts) as Anthropic blocks.
 * `cache_control` on a part is carried onto its block, so prompt caching works through the
 * common API.
 */
export function convertContent(content: unknown, param: string, provider: string): InputBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw malformed(`${param} must be a string or an array of content parts`, param);
  return content.map((part: unknown, index) => convertPart(part, `${param}[${index}]`, provider));
}

function convertPart(part: unknown, param: string, provider: string): InputBlock {
  if (!isRecord(part)) throw malformed(`${param} must be a content part object`, param);
  const block = convertPartBody(part, param, provider);
  if (isRecord(part['cache_control'])) block.cache_control = part['cache_control'];
  return block;
}

function convertPartBody(part: Record<string, unknown>, param: string, provider: string): InputBlock {
  switch (part['type']) {
    case 'text':
    case 'input_text':
    case 'refusal': {
      const text = part['type'] === 'refusal' ? part['refusal'] : part['text'];
      if (typeof text !== 'string') throw malformed(`${param} must carry its text as a string`, param);
      return { type: 'text', text };
    }
    case 'image_url':
    case 'input_image':
      return { type: 'image', source: imageSource(part['image_url'], param, provider) };
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

/** `data:<type>;base64,<data>`; null when the text is not a base64 data URL. */
export function parseDataUrl(url: string): DataUrl | null {
  const match = /^data:([^;,]+)((?:;[^;,]*)*);base64,/i.exec(url);
  if (match === null) return null;
  return { mediaType: (match[1] ?? '').trim().toLowerCase(), data: url.slice(match[0].length) };
}

function imageSource(value: unknown, param: string, provider: string): ImageSource {
  const image = typeof value === 'string' ? { url: value } : value;
  const url = isRecord(image) ? image['url'] : undefined;
  if (typeof url !== 'string' || url === '') throw malformed(`${param}.image_url.url must be a string`, `${param}.image_url.url`);
  if (/^https?:\/\//i.test(url)) return { type: 'url', url };
  const parsed = parseDataUrl(url);
  const declared = isRecord(image) && typeof image['media_type'] === 'string' ? image['media_type'].toLowerCase() : undefined;
  // A bare base64 string is accepted when the part declares its media type.
  const source = parsed ?? (declared === undefined || url.startsWith('data:') ? null : { mediaType: declared, data: url });
  if (source === null) throw unsupported('an image URL that is neither http(s) nor a base64 data URL', `${param}.image_url.url`, provider);
  const mediaType = source.mediaType === 'image/jpg' ? 'image/jpeg' : source.mediaType;
  if (!imageMediaTypes.has(mediaType)) throw unsupported(`image media type ${mediaType}`, `${param}.image_url.url`, provider);
  return { type: 'base64', media_type: mediaType, data: source.data };
}

/** OpenAI `file` parts: PDFs (base64 or URL) and plain text become Anthropic documents. */
function documentBlock(value: unknown, param: string, provider: string): DocumentBlock {
  if (!isRecord(value)) throw malformed(`${param}.file must be an object`, `${param}.file`);
  const title = typeof value['filename'] === 'string' && value['filename'] !== '' ? { title: value['filename'] } : {};
  const fileData = value['file_data'];
  const fileUrl = value['file_url'];
  if (typeof fileData === 'string' && fileData !== '') {
    const parsed = parseDataUrl(fileData);
    if (parsed === null && fileData.startsWith('data:'))
      throw unsupported('a file_data that is not base64', `${param}.file.file_data`, provider);
    // OpenAI takes bare base64 file data as a PDF, the one file type chat accepts.
    const { mediaType, data } = parsed ?? { mediaType: 'application/pdf', data: fileData };
    if (mediaType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: mediaType, data }, ...title };
    if (mediaType === 'text/plain') {
      const text = Buffer.from(data, 'base64').toString('utf8');
      return { type: 'document', source: { type: 'text', media_type: mediaType, data: text }, ...title };
    }
    throw unsupported(`file media type ${mediaType}`, `${param}.file.file_data`, provider);
  }
  if (typeof fileUrl === 'string' && /^https?:\/\//i.test(fileUrl))
    return { type: 'document', source: { type: 'url', url: fileUrl }, ...title };
  if (value['file_id'] !== undefined) throw unsupported('a file_id reference', `${param}.file.file_id`, provider);
  throw malformed(`${param}.file needs file_data or file_url`, `${param}.file`);
}
