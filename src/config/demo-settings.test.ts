import { describe, expect, it } from 'vitest';

import { readDemoSettings } from './demo-settings.ts';

describe('readDemoSettings', () => {
  it('defaults the gateway to port 8080 and leaves the provider address to the caller', () => {
    expect(readDemoSettings({ PATH: '/bin' })).toEqual({ mockHost: null, mockPort: null, gatewayPort: 8080, path: '/bin', home: null });
  });

  it('reads PORT, MOCK_HOST and MOCK_PORT', () => {
    expect(readDemoSettings({ PORT: '0', MOCK_HOST: '0.0.0.0', MOCK_PORT: '9000', HOME: '/root' })).toMatchObject({
      gatewayPort: 0,
      mockHost: '0.0.0.0',
      mockPort: 9000,
      home: '/root',
    });
  });

  it('refuses a port that is not one', () => {
    expect(() => readDemoSettings({ PORT: 'eighty' })).toThrow('PORT must be a port number');
    expect(() => readDemoSettings({ MOCK_PORT: '70000' })).toThrow('MOCK_PORT must be a port number');
  });
});
