import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import type { Database, SqlJsStatic } from 'sql.js';
import { isAlive, LockBusyError, withLock } from '../process/lockFile';
import { errorMessage } from '../errorMessage';
import { KindError, isKindError } from '../kindError';

/**
 * One SQLite file shared by several processes, through sql.js (the whole
 * database lives in memory). Every write takes the lock, re-reads the file,
 * applies the change, exports, writes a temp file and renames it over the
 * old one: readers see the old database or the new one, never half of
 * either, and two writers never lose each other's rows. A file that is not a
 * readable database is moved aside and reported, never overwritten.
 */

export type SqliteFileErrorKind = 'corrupt' | 'locked';

export class SqliteFileError extends KindError<SqliteFileErrorKind> {
  override readonly name = 'SqliteFileError';
  constructor(
    kind: SqliteFileErrorKind,
    message: string,
    /** For 'corrupt': where the unreadable file was moved. */
    readonly movedTo?: string,
  ) {
    super(kind, message);
  }
}

export interface SqliteFileOptions {
  readonly file: string;
  /** Statements that create the schema; idempotent, run when the file's user_version is not `schemaVersion`. */
  readonly schema: string;
  readonly schemaVersion: number;
  /**
   * Runs after `schema`, in the same circumstances, before user_version is
   * set: brings tables written by an older schema up to date (ALTER TABLE …).
   * Must be idempotent: decide from the tables themselves (PRAGMA table_info),
   * not from user_version, which an older build sharing the file may reset.
   */
  readonly migrate?: (db: Database) => void;
  /** Where sql.js finds its wasm file; default the one in node_modules. */
  readonly locateFile?: (name: string) => string;
  readonly clock?: () => Date;
  readonly lockTimeoutMs?: number;
}

let loading: Promise<SqlJsStatic> | undefined;

/**
 * sql.js compiles its wasm once per process and keeps that promise, failed or
 * not: the first caller's `locateFile` wins (the host passes the copy it
 * ships; tests and the CLI use node_modules).
 */
function engine(locateFile?: (name: string) => string): Promise<SqlJsStatic> {
  loading ??= initSqlJs({ locateFile: locateFile ?? ((name: string) => require.resolve(`sql.js/dist/${name}`)) });
  return loading;
}

const SQLITE_HEADER = 'SQLite format 3\u0000';

/** A write holds the lock for milliseconds: one older than this was left by a pid since reused. */
const STALE_LOCK_MS = 5 * 60_000;

export class SqliteFile {
  /**
   * The database as last read or written, with the bytes it came from. A
   * file that still holds exactly those bytes is this database: no reload.
   * Comparing bytes, not timestamps or inode numbers, cannot be fooled.
   */
  private cached: { readonly bytes: Buffer; readonly db: Database } | undefined;

  private constructor(
    private readonly options: SqliteFileOptions,
    private readonly sql: SqlJsStatic,
  ) {}

  get file(): string {
    return this.options.file;
  }

  /** Opens (or starts) the file. A corrupt file is moved aside and a SqliteFileError 'corrupt' thrown; opening again starts fresh. */
  static async open(options: SqliteFileOptions): Promise<SqliteFile> {
    const sql = await engine(options.locateFile);
    fs.mkdirSync(path.dirname(options.file), { recursive: true });
    const store = new SqliteFile(options, sql);
    store.removeDeadTempFiles();
    await store.read(() => undefined);
    return store;
  }

  /** Runs `query` on the database as it is on disk now. */
  async read<T>(query: (db: Database) => T): Promise<T> {
    const db = this.tryLoad() ?? (await this.locked(() => this.loadOrMoveAside()));
    return query(db);
  }

  /** Applies `change` to the database as it is on disk now and saves it atomically. */
  async write<T>(change: (db: Database) => T): Promise<T> {
    return this.locked(() => {
      const db = this.loadOrMoveAside();
      db.run('BEGIN');
      let result: T;
      try {
        result = change(db);
        db.run('COMMIT');
      } catch (err) {
        db.run('ROLLBACK');
        throw err;
      }
      try {
        const bytes = db.export();
        this.save(bytes);
        this.cached = { bytes: Buffer.from(bytes), db };
      } catch (err) {
        // The file still holds the old bytes but the copy in memory has the change: forget it.
        this.close();
        throw err;
      }
      return result;
    });
  }

  /** Frees the in-memory copy. */
  close(): void {
    this.cached?.db.close();
    this.cached = undefined;
  }

  private async locked<T>(work: () => T): Promise<T> {
    try {
      return await withLock(`${this.options.file}.lock`, work, { timeoutMs: this.options.lockTimeoutMs, staleMs: STALE_LOCK_MS, holderName: 'another writer', holderOf: `of ${this.options.file}` });
    } catch (err) {
      if (isKindError(err, LockBusyError)) throw new SqliteFileError('locked', err.message);
      throw err;
    }
  }

  /** The database, or undefined when the file is unreadable (decided again under the lock). */
  private tryLoad(): Database | undefined {
    try {
      return this.load(this.readBytes());
    } catch {
      return undefined;
    }
  }

  private loadOrMoveAside(): Database {
    const bytes = this.readBytes();
    try {
      return this.load(bytes);
    } catch (err) {
      const movedTo = this.moveAside();
      throw new SqliteFileError(
        'corrupt',
        `${this.options.file} is not a readable SQLite database (${errorMessage(err)}); it was moved to ${movedTo} and a fresh database will be started`,
        movedTo,
      );
    }
  }

  private readBytes(): Buffer | undefined {
    try {
      return fs.readFileSync(this.options.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** `bytes` undefined (no file yet) and empty both mean an empty database. */
  private load(found: Buffer | undefined): Database {
    const bytes = found ?? Buffer.alloc(0);
    const cached = this.cached;
    if (cached && cached.bytes.equals(bytes)) return cached.db;
    const db = this.parse(bytes);
    this.close();
    this.cached = { bytes, db };
    return db;
  }

  private parse(bytes: Buffer): Database {
    const empty = bytes.length === 0;
    if (!empty && bytes.subarray(0, 16).toString('latin1') !== SQLITE_HEADER) throw new Error('no SQLite header');
    const db = empty ? new this.sql.Database() : new this.sql.Database(bytes);
    try {
      if (!empty) {
        const verdict = db.exec('PRAGMA quick_check')[0]?.values[0]?.[0];
        if (verdict !== 'ok') throw new Error(`quick_check: ${String(verdict)}`);
      }
      const version = db.exec('PRAGMA user_version')[0]?.values[0]?.[0];
      if (version !== this.options.schemaVersion) {
        db.exec(this.options.schema);
        this.options.migrate?.(db);
        db.exec(`PRAGMA user_version = ${this.options.schemaVersion};`);
      }
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private save(bytes: Uint8Array): void {
    const temp = `${this.options.file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    const fd = fs.openSync(temp, 'wx');
    try {
      fs.writeSync(fd, bytes);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, this.options.file);
    syncFolder(path.dirname(this.options.file));
  }

  private moveAside(): string {
    const stamp = (this.options.clock?.() ?? new Date()).toISOString().replace(/[:.]/g, '-');
    let target = `${this.options.file}.corrupt-${stamp}`;
    for (let n = 1; fs.existsSync(target); n++) target = `${this.options.file}.corrupt-${stamp}-${n}`;
    fs.renameSync(this.options.file, target);
    return target;
  }

  /** Temp files of writers that died mid-write: harmless (never renamed in), but clutter. */
  private removeDeadTempFiles(): void {
    const folder = path.dirname(this.options.file);
    const prefix = `${path.basename(this.options.file)}.tmp-`;
    for (const name of fs.readdirSync(folder)) {
      if (!name.startsWith(prefix)) continue;
      const pid = Number(name.slice(prefix.length).split('-')[0]);
      if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) fs.rmSync(path.join(folder, name), { force: true });
    }
  }
}

function syncFolder(folder: string): void {
  try {
    const fd = fs.openSync(folder, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Not every platform can fsync a folder (Windows); the rename is still atomic.
  }
}
