import { providerTypeNames, type ProviderType } from '../providers/provider-types.ts';

export interface EnvProviderEntry {
  name: string;
  type: ProviderType;
  api_key?: string;
  base_url?: string;
  models?: string;
  /** The variable names that declared this instance, for error messages. */
  variables: Record<'api_key' | 'base_url' | 'models', string>;
}

const fields = { API_KEY: 'api_key', BASE_URL: 'base_url', MODELS: 'models' } as const;

/** The variable endings that declare an instance: `<TYPE>_API_KEY`, `<TYPE>_<SUFFIX>_BASE_URL`, ... */
export const envProviderEndings = Object.keys(fields) as ReadonlyArray<keyof typeof fields>;

// Longest prefixes first, so OPENAI_COMPATIBLE_API_KEY is the openai-compatible type and not
// an `openai` instance with the suffix COMPATIBLE.
const typePrefixes = providerTypeNames
  .map((type) => ({ type, prefix: type.toUpperCase().replaceAll('-', '_') }))
  .sort((left, right) => right.prefix.length - left.prefix.length);

const variablePattern = new RegExp(`^([A-Z0-9_]+?)_(${envProviderEndings.join('|')})$`);

/**
 * Provider instances declared by the environment: `<TYPE>_API_KEY`, `<TYPE>_BASE_URL`,
 * `<TYPE>_MODELS` register instance `<type>`; `<TYPE>_<SUFFIX>_...` registers
 * `<type>-<suffix>` (lower case, `_` becomes `-`).
 */
export function discoverEnvProviders(env: Readonly<Record<string, string | undefined>>): EnvProviderEntry[] {
  const entries = new Map<string, EnvProviderEntry>();
  for (const [variable, value] of Object.entries(env)) {
    if (value === undefined || value.trim() === '') continue;
    const match = variablePattern.exec(variable);
    if (!match) continue;
    const head = match[1] ?? '';
    const field = fields[match[2] as keyof typeof fields];
    const found = typePrefixes.find(({ prefix }) => head === prefix || head.startsWith(`${prefix}_`));
    if (!found) continue;
    const suffix = head.slice(found.prefix.length + 1);
    const name = suffix === '' ? found.type : `${found.type}-${suffix.toLowerCase().replaceAll('_', '-')}`;
    const entry = entries.get(name) ?? { name, type: found.type, variables: { api_key: '', base_url: '', models: '' } };
    entry[field] = value.trim();
    entry.variables[field] = variable;
    entries.set(name, entry);
  }
  return [...entries.values()].sort((left, right) => left.name.localeCompare(right.name));
}
