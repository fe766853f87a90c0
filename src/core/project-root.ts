import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding the project's package.json (and `dashboard/`, `dist/`). A module finds it
 * from its own URL by walking up, because it runs at different depths: from `src/` (tsx,
 * tests), from `dist/` (tsc's output) and from the start-up bundle (`dist/main.js` and
 * `dist/chunks/`, ADR 0016), where every module's `import.meta.url` is a chunk's.
 */
export function projectRoot(moduleUrl: string = import.meta.url): string {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let directory = start; ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    if (dirname(directory) === directory) throw new Error(`no package.json above ${start}`);
  }
}
