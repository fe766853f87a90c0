/** A configuration problem; the message names the key (or variable) and the reason. */
export class ConfigError extends Error {
  readonly key: string;

  constructor(key: string, reason: string) {
    super(`invalid configuration: ${key}: ${reason}`);
    this.name = 'ConfigError';
    this.key = key;
  }
}
