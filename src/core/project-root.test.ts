import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { projectRoot } from './project-root.ts';

const root = resolve(import.meta.dirname, '..', '..');

describe('projectRoot', () => {
  it('finds the folder with package.json from src/, dist/ and the bundle in dist/chunks/', () => {
    expect(projectRoot()).toBe(root);
    expect(projectRoot(pathToFileURL(join(root, 'dist', 'http', 'routes', 'dashboard.js')).href)).toBe(root);
    expect(projectRoot(pathToFileURL(join(root, 'dist', 'chunks', 'chunk-ABC.js')).href)).toBe(root);
    expect(projectRoot(pathToFileURL(join(root, 'dist', 'main.js')).href)).toBe(root);
    expect(existsSync(join(projectRoot(), 'dashboard'))).toBe(true);
  });

  it('throws when no folder above has a package.json', () => {
    expect(() => projectRoot('file:///no-such-folder/x.js')).toThrow(/no package.json above/);
  });
});
