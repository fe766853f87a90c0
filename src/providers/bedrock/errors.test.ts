import { describe, expect, it } from 'vitest';

import { bedrockErrorStatus, errorTypeOf } from './errors.ts';

describe('Bedrock error statuses', () => {
  it('reads the type of x-amzn-ErrorType', () => {
    expect(errorTypeOf('ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/')).toBe('ThrottlingException');
    expect(errorTypeOf(['ValidationException'])).toBe('ValidationException');
    expect(errorTypeOf(undefined)).toBe('');
  });

  it('maps model timeouts and failures to provider errors, quotas to rate limits, the rest by status', () => {
    expect(bedrockErrorStatus(408, 'ModelTimeoutException')).toBe(504);
    expect(bedrockErrorStatus(424, 'ModelErrorException')).toBe(502);
    expect(bedrockErrorStatus(400, 'ServiceQuotaExceededException')).toBe(429);
    expect(bedrockErrorStatus(429, 'ThrottlingException')).toBe(429);
    expect(bedrockErrorStatus(400, 'ValidationException')).toBe(400);
    expect(bedrockErrorStatus(403, '')).toBe(403);
  });
});
