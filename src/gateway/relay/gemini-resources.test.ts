import { describe, expect, it } from 'vitest';

import { bareId, fileIdsOf, gatewayUploadUrl, uploadIdOf } from './gemini-resources.ts';

describe('Gemini resource names', () => {
  it('bareId drops the collection prefix only', () => {
    expect(bareId('files/abc', 'files')).toBe('abc');
    expect(bareId('abc', 'files')).toBe('abc');
    expect(bareId('cachedContents/x', 'files')).toBe('cachedContents/x');
  });

  it('fileIdsOf reads fileData.fileUri in contents and the system instruction, once each', () => {
    const part = (uri: string) => ({ fileData: { fileUri: uri, mimeType: 'text/plain' } });
    const body = {
      contents: [{ parts: [part('https://generativelanguage.googleapis.com/v1beta/files/a1'), part('files/b2'), { text: 'hi' }] }],
      systemInstruction: { parts: [part('https://x/v1beta/files/a1?alt=media')] },
    };
    expect(fileIdsOf(body).sort()).toEqual(['a1', 'b2']);
    expect(fileIdsOf({ contents: 'not a list' })).toEqual([]);
  });
});

describe('resumable upload URLs', () => {
  it('reads the upstream upload id and answers the gateway URL for it', () => {
    expect(uploadIdOf('https://up.example/upload/v1beta/files?upload_id=AB-c&upload_protocol=resumable', 'google')).toBe('AB-c');
    expect(gatewayUploadUrl('http://gw', 'a b')).toBe('http://gw/upload/v1beta/files?upload_id=a%20b&upload_protocol=resumable');
  });

  it('fails closed on an answer without a readable upload id', () => {
    for (const url of [undefined, 'not a url', 'https://up.example/upload?x=1', `https://u/?upload_id=${'x'.repeat(2000)}`]) {
      expect(() => uploadIdOf(url, 'google')).toThrow(/x-goog-upload-url/);
    }
  });
});
