import { describe, expect, it } from 'vitest';

import { computeSignature, parseAuthorization, sigV4Problem } from '../../../test/support/sigv4-verify.ts';
import { signRequest } from './sigv4.ts';

// The signer against AWS's published SigV4 examples (fixed date and the documentation's
// example key), and against an independent implementation of the algorithm
// (test/support/sigv4-verify.ts) for a Bedrock request whose model id needs encoding.

const exampleCredentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

function signatureOf(authorization: string | undefined): string {
  return parseAuthorization(authorization)?.signature ?? '';
}

describe('signRequest', () => {
  it('reproduces the AWS test-suite vector get-vanilla', async () => {
    const headers = await signRequest(
      { method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {} },
      { credentials: exampleCredentials, region: 'us-east-1', service: 'service', signingDate: new Date('2015-08-30T12:36:00Z') },
    );
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
    expect(headers['authorization']).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, ' +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
  });

  it("reproduces the signed POST example of AWS's SigV4 documentation (IAM ListUsers)", async () => {
    const headers = await signRequest(
      {
        method: 'POST',
        url: new URL('http://iam.amazonaws.com/'),
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
        body: 'Action=ListUsers&Version=2010-05-08',
      },
      { credentials: exampleCredentials, region: 'us-east-1', service: 'iam', signingDate: new Date('2011-09-09T23:36:00Z') },
    );
    expect(headers['authorization']).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20110909/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, ' +
        'Signature=ced6826de92d2bdeed8f846f0bf508e8559e98e4b0199114b84c54174deb456c',
    );
    expect(headers['host']).toBeUndefined();
  });

  it('signs a Converse call on an inference profile id as an independent implementation derives it', async () => {
    const model = encodeURIComponent('us.anthropic.claude-3-5-sonnet-20241022-v2:0');
    const url = new URL(`https://bedrock-runtime.us-west-2.amazonaws.com/model/${model}/converse`);
    const body = '{"messages":[{"role":"user","content":[{"text":"Hello"}]}]}';
    const credentials = { ...exampleCredentials, sessionToken: 'session-token-example' };
    const headers = await signRequest(
      { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
      { credentials, region: 'us-west-2', service: 'bedrock', signingDate: new Date('2024-11-05T10:20:30Z') },
    );
    expect(url.pathname).toBe('/model/us.anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse');
    expect(headers['x-amz-security-token']).toBe('session-token-example');
    const parsed = parseAuthorization(headers['authorization']);
    expect(parsed).toMatchObject({ accessKeyId: 'AKIDEXAMPLE', date: '20241105', region: 'us-west-2', service: 'bedrock' });
    expect(parsed?.signedHeaders).toEqual(['content-type', 'host', 'x-amz-date', 'x-amz-security-token']);
    const input = { method: 'POST', path: url.pathname, query: '', headers: { ...headers, host: url.host }, body };
    const independent = computeSignature(
      input,
      exampleCredentials.secretAccessKey,
      '20241105T102030Z',
      'us-west-2',
      'bedrock',
      parsed?.signedHeaders ?? [],
    );
    expect(signatureOf(headers['authorization'])).toBe(independent);
    expect(sigV4Problem(input, new Map([['AKIDEXAMPLE', exampleCredentials.secretAccessKey]]), 'bedrock')).toBeNull();
    expect(sigV4Problem({ ...input, body: `${body} ` }, new Map([['AKIDEXAMPLE', exampleCredentials.secretAccessKey]]), 'bedrock')).toMatch(
      /does not match/,
    );
  });

  it('the independent implementation reproduces the documented vectors too', () => {
    const vanilla = {
      method: 'GET',
      path: '/',
      query: '',
      headers: { host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' },
      body: '',
    };
    expect(
      computeSignature(vanilla, exampleCredentials.secretAccessKey, '20150830T123600Z', 'us-east-1', 'service', ['host', 'x-amz-date']),
    ).toBe('5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
  });
});
