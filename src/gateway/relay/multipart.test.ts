import { describe, expect, it } from 'vitest';
import { FormData, Response } from 'undici';
import { GatewayError } from '../../errors/gateway-error.ts';
import { thrown } from '../../testing/thrown.ts';
import { boundaryOf, editForm, fieldOf, multipartLimits, readForm } from './multipart.ts';

/** A form encoded by undici (what the openai client sends), as bytes and content type. */
async function encode(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const response = new Response(form);
  return { body: Buffer.from(await response.arrayBuffer()), contentType: response.headers.get('content-type') as string };
}

/** Decodes a form with undici's own parser: proof the bytes are a valid multipart body. */
async function decode(body: Buffer, contentType: string): Promise<FormData> {
  return new Response(body, { headers: { 'content-type': contentType } }).formData();
}

const audio = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x0d, 0x0a, 0x2d, 0x2d, 0xff, 0x00, 0xfe]);

async function uploadForm(): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  form.append('file', new Blob([audio], { type: 'audio/mpeg' }), 'speech "one".mp3');
  form.append('model', 'openai/whisper-1');
  form.append('provider', 'openai');
  form.append('response_format', 'json');
  form.append('timestamp_granularities[]', 'word');
  return encode(form);
}

describe('boundaryOf', () => {
  it('reads plain and quoted boundaries', () => {
    expect(boundaryOf('multipart/form-data; boundary=abc123')).toBe('abc123');
    expect(boundaryOf('Multipart/Form-Data; charset=utf-8; boundary="a b:c"')).toBe('a b:c');
  });

  it('refuses other content types and a missing boundary with 400 invalid_body', () => {
    for (const contentType of [undefined, 'application/json', 'multipart/form-data', 'multipart/mixed; boundary=x']) {
      const error = thrown(GatewayError, () => boundaryOf(contentType));
      expect(error.status).toBe(400);
      expect(error.code).toBe('invalid_body');
    }
  });
});

describe('readForm', () => {
  it('finds the fields of a form encoded by undici, file bytes untouched', async () => {
    const { body, contentType } = await uploadForm();
    const form = readForm(body, boundaryOf(contentType));
    expect(form.parts.map((part) => part.name)).toEqual(['file', 'model', 'provider', 'response_format', 'timestamp_granularities[]']);
    expect(form.parts[0]?.filename).toBe('speech %22one%22.mp3');
    const file = form.parts[0];
    expect(file && body.subarray(file.contentStart, file.contentEnd).equals(audio)).toBe(true);
    expect(fieldOf(form, 'model')).toBe('openai/whisper-1');
    expect(fieldOf(form, 'absent')).toBeUndefined();
  });

  it('reads a hand-written form with a preamble, padding, quoted escapes and an epilogue', () => {
    const text = [
      'ignored preamble',
      '--xyz  ',
      'Content-Disposition: form-data; name="model"',
      '',
      'whisper-1',
      '--xyz',
      'content-disposition: form-data; filename="a\\"b.wav"; name=file',
      'Content-Type: audio/wav',
      '',
      'RIFF',
      '--xyz--',
      'epilogue',
    ].join('\r\n');
    const form = readForm(Buffer.from(text), 'xyz');
    expect(form.parts.map((part) => [part.name, part.filename])).toEqual([
      ['model', null],
      ['file', 'a"b.wav'],
    ]);
    expect(fieldOf(form, 'model')).toBe('whisper-1');
  });

  it('refuses truncated and malformed bodies with 400', () => {
    const cases = [
      'no boundary here',
      'junk--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue\r\n--xyz--',
      '--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue without an end',
      '--xyzjunk\r\n\r\nvalue\r\n--xyz--',
      '--xyz\r\nContent-Disposition: form-data; name="a"',
    ];
    for (const text of cases) {
      expect(thrown(GatewayError, () => readForm(Buffer.from(text), 'xyz')).status, text).toBe(400);
    }
  });

  it('bounds the number of parts and the size of part headers', () => {
    const many = `${'--b\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n'.repeat(multipartLimits.maxParts + 1)}--b--`;
    expect(thrown(GatewayError, () => readForm(Buffer.from(many), 'b')).message).toMatch(/more than/);
    const header = `--b\r\nX-Long: ${'a'.repeat(multipartLimits.maxHeaderBytes)}\r\n\r\n1\r\n--b--`;
    expect(thrown(GatewayError, () => readForm(Buffer.from(header), 'b')).message).toMatch(/headers/);
  });

  it('refuses a file or an oversized value where a text field is expected', async () => {
    const { body, contentType } = await uploadForm();
    const form = readForm(body, boundaryOf(contentType));
    expect(thrown(GatewayError, () => fieldOf(form, 'file')).param).toBe('file');
  });
});

describe('editForm', () => {
  it('replaces and drops fields and leaves a valid form with the file intact', async () => {
    const { body, contentType } = await uploadForm();
    const form = readForm(body, boundaryOf(contentType));
    const edited = editForm(form, { set: { model: 'whisper-1' }, drop: ['provider'] });
    const decoded = await decode(edited, contentType);
    expect(decoded.get('model')).toBe('whisper-1');
    expect(decoded.has('provider')).toBe(false);
    expect(decoded.get('response_format')).toBe('json');
    expect(decoded.getAll('timestamp_granularities[]')).toEqual(['word']);
    const file = decoded.get('file') as File;
    expect(file.type).toBe('audio/mpeg');
    expect(Buffer.from(await file.arrayBuffer()).equals(audio)).toBe(true);
    // Only the edited ranges changed.
    const dropped = form.parts[2];
    expect(dropped?.name).toBe('provider');
    expect(edited.length).toBe(body.length - 'openai/'.length - ((dropped?.end ?? 0) - (dropped?.start ?? 0)));
  });

  it('returns the same bytes when nothing is edited', async () => {
    const { body, contentType } = await uploadForm();
    expect(editForm(readForm(body, boundaryOf(contentType)), {}).equals(body)).toBe(true);
  });
});
