/**
 * Where the store lives when `--store` is not given, relative to the working directory. Apart from
 * the store (SQLite) so that a command's `--help` shows it without loading the database driver.
 */
export const DEFAULT_STORE_PATH = '.kforge/kforge.db';
