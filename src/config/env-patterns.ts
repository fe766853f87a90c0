import { azureVersionVariables } from '../providers/azure/settings-from-env.ts';
import { budgetVariablePrefix } from './budgets.ts';
import { envProviderEndings } from './env-providers.ts';
import { providerRateLimitVariablePrefix, rateLimitVariablePrefix } from './rate-limits.ts';

/**
 * Families of environment variables the loader finds by scanning the environment rather than by
 * name, written as docs/configuration.md writes them: `<TYPE>` a provider type in upper case (`-`
 * as `_`), `<SUFFIX>` the rest of an instance name, `<PATH>` a user path (`__` between segments),
 * `<NAME>` a provider instance. The variables read by name are in `scalarVariables` (load.ts) and
 * the modules that read them; config/configuration-doc.test.ts holds both against the document.
 */
export const environmentPatterns: readonly string[] = [
  ...envProviderEndings.flatMap((ending) => [`<TYPE>_${ending}`, `<TYPE>_<SUFFIX>_${ending}`]),
  ...azureVersionVariables,
  `${budgetVariablePrefix}<PATH>`,
  `${rateLimitVariablePrefix}<PATH>`,
  `${providerRateLimitVariablePrefix}<NAME>`,
];
