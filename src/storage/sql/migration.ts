/** A versioned schema change. Versions are applied in ascending order, each once, each in a transaction. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

/** Checks that a migration list is strictly ascending, so that a bad append fails at open and in tests. */
export function assertOrderedMigrations(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    const previous = migrations[index - 1];
    if (!Number.isInteger(migration.version) || (previous !== undefined && migration.version <= previous.version)) {
      throw new Error(`Migration versions must be ascending integers: ${migration.version} (${migration.name})`);
    }
  });
}
