import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `npm run demo` (and whoever else wants a current dist/ without paying for a build each time):
// builds only when dist/ is missing or older than a file it is built from. dist/chunks/inputs.json
// is the last file `npm run build` writes (scripts/bundle.ts), so its time is the build's end.

/** What a build reads: every file under src/, and the build's own configuration. */
const inputFiles = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.ts'];
const buildMarker = join('dist', 'chunks', 'inputs.json');

/** Why `root` needs a build (a sentence), or null when dist/ is newer than every input. */
export function staleReason(root: string): string | null {
  const marker = join(root, buildMarker);
  if (!existsSync(marker)) return `${buildMarker} is missing`;
  const builtAt = statSync(marker).mtimeMs;
  const inputs = [...inputFiles.map((file) => join(root, file)).filter((path) => existsSync(path)), ...filesUnder(join(root, 'src'))];
  const newer = inputs.find((path) => statSync(path).mtimeMs > builtAt);
  return newer === undefined ? null : `${newer} changed after the last build`;
}

function filesUnder(directory: string): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const reason = staleReason(root);
  if (reason === null) {
    console.log('dist/ is up to date: no build needed');
  } else {
    console.log(`building (${reason})`);
    execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  }
}
