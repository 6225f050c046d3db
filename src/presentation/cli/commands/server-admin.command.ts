/**
 * `agents server migrate|backup|restore`: the operator's maintenance of a server's database. They
 * open the database directly (through the composition root, as `agents serve` does), not through
 * an agent: they run where the server's data is, while it runs (migrate, backup) or is stopped
 * (restore of a SQLite file).
 */
import type { Command } from 'commander';
import type { CliCommand } from '../cli-command.ts';
import { UsageError } from '../exit-codes.ts';
import type { Ui } from '../render/ui.ts';
import type { Runner } from '../runner.ts';
import { readServerConfig, serveCommandOf, serverConfigKeys, serverConfigPath } from '../server-config.ts';

/** Which database: `--database-url` (else its variable or the config file), else the data directory's SQLite file. */
export interface MaintenanceTarget {
  databaseUrl?: string | undefined;
  dataDir?: string | undefined;
}

/** Where a database's migrations stand. */
export interface MigrationState {
  /** The database, as shown to people (a URL without its password, or the file). */
  database: string;
  engine: 'sqlite' | 'postgresql';
  applied: number;
  /** This code's migrations not yet applied, in order. */
  pending: string[];
  /** Migrations of a newer version of CleverAgents. */
  unknown: string[];
}

export interface BackupReport {
  database: string;
  file: string;
  /** The secret key's copy (`--with-key`). */
  keyFile?: string | undefined;
  /** The data directory's secret key: stored secrets cannot be read without it. */
  secretKeyFile: string;
}

export interface RestoreReport {
  database: string;
  file: string;
  /** SQLite: the replaced database, kept beside it. */
  previous?: string | undefined;
  /** Where the backup's secret key was put (`--with-key`). */
  keyRestored?: string | undefined;
  secretKeyFile: string;
  /** Migrations the restored database lacks: the server applies them when it starts. */
  pending: string[];
}

/** What the composition root does for these commands. */
export interface ServerMaintenance {
  migrationState(target: MaintenanceTarget): Promise<MigrationState>;
  /** Applies the pending migrations; returns the state before. */
  migrate(target: MaintenanceTarget): Promise<MigrationState>;
  backup(target: MaintenanceTarget, file: string, withKey: boolean): Promise<BackupReport>;
  restore(target: MaintenanceTarget, file: string, opts: { withKey: boolean; yes: boolean }): Promise<RestoreReport>;
}

interface TargetFlags {
  config?: string;
  databaseUrl?: string;
}

const KEY_NOTE = `The backup does not hold the data directory's secret key (secret.key, or
CLEVERAGENTS_SECRET_KEY_FILE), which encrypts the stored secrets: keep a copy
of it apart from the backups, or pass --with-key to write it beside the backup
as FILE.key (mode 0600). A database restored without its key has secrets
nobody can read.`;

/** The target: flags, else their variables (read by the composition root), else the config file. */
function targetOf(cmd: Command, flags: TargetFlags, env: NodeJS.ProcessEnv): MaintenanceTarget {
  let root = cmd;
  while (root.parent) root = root.parent;
  const path = serverConfigPath(flags.config, env);
  const file = path === undefined ? [] : readServerConfig(path, serverConfigKeys(serveCommandOf(root)));
  const fromFile = (key: string, variable: string): string | undefined => {
    const v = file.find((s) => s.key === key)?.value;
    return (env[variable] ?? '') === '' && typeof v === 'string' ? v : undefined;
  };
  return {
    databaseUrl: flags.databaseUrl ?? fromFile('databaseUrl', 'CLEVERAGENTS_DATABASE_URL'),
    dataDir: cmd.optsWithGlobals<{ dataDir?: string }>().dataDir ?? fromFile('dataDir', 'CLEVERAGENTS_DATA_DIR'),
  };
}

/** The options every maintenance command takes to name its database. */
function targetOptions(command: CliCommand): CliCommand {
  return command
    .option(
      '--database-url <url>',
      'the PostgreSQL database (env CLEVERAGENTS_DATABASE_URL; default: SQLite in --data-dir)',
    )
    .option('--config <file>', "the server's config file, for databaseUrl and dataDir (env CLEVERAGENTS_CONFIG)");
}

/** Adds migrate, backup and restore to `agents server`. */
export function registerServerAdmin(
  server: CliCommand,
  runner: Runner,
  maintenance: (() => Promise<ServerMaintenance>) | undefined,
): void {
  const admin = async (): Promise<ServerMaintenance> => {
    if (!maintenance) throw new UsageError('server maintenance is not available in this build');
    return maintenance();
  };
  registerMigrate(server, runner, admin);
  registerBackup(server, runner, admin);
  registerRestore(server, runner, admin);
}

function registerMigrate(server: CliCommand, runner: Runner, admin: () => Promise<ServerMaintenance>): void {
  targetOptions(
    server
      .command('migrate')
      .description("Bring the server's database schema up to date (--check: only say whether it is)"),
  )
    .option('--check', 'change nothing: exit 0 when up to date, 5 with the pending migrations named, 8 when newer')
    .addHelpText(
      'after',
      '\n`agents serve` migrates when it starts; run this first to upgrade at a time\nof your choosing. A database written by a newer CleverAgents is never\nchanged (exit 8).',
    )
    .action((opts: TargetFlags & { check?: boolean }, cmd: Command) =>
      runner.run(
        cmd,
        'server migrate',
        async (ctx) => {
          const target = targetOf(cmd, opts, ctx.io.env);
          const m = await admin();
          const state = await m.migrationState(target);
          if (state.unknown.length > 0) {
            ctx.ui.warn(
              `${state.database} was written by a newer version of CleverAgents (migrations ${state.unknown.join(', ')}): this version neither serves nor migrates it`,
            );
            return { data: state, exit: 'VERSION_NOT_SUPPORTED' };
          }
          if (state.pending.length === 0) {
            ctx.ui.done(`${state.database} is up to date (${state.applied} migrations)`);
            return { data: state };
          }
          if (opts.check === true) {
            renderPending(ctx.ui, state, 'pending');
            return { data: state, exit: 'INVALID_STATE' };
          }
          await m.migrate(target);
          renderPending(ctx.ui, state, 'applied');
          return {
            data: { ...state, applied: state.applied + state.pending.length, migrated: state.pending, pending: [] },
          };
        },
        { local: true },
      ),
    );
}

function renderPending(ui: Ui, state: MigrationState, verb: string): void {
  ui.out(
    `${state.database}: ${state.pending.length} migration(s) ${verb}:\n${state.pending.map((n) => `  ${n}\n`).join('')}`,
  );
}

function registerBackup(server: CliCommand, runner: Runner, admin: () => Promise<ServerMaintenance>): void {
  targetOptions(
    server
      .command('backup')
      .description("Copy the server's database to a file, while it runs (SQLite: online backup; PostgreSQL: pg_dump)")
      .argument('<file>', 'the backup file to write'),
  )
    .option('--with-key', "also copy the data directory's secret key, to FILE.key (mode 0600)")
    .addHelpText('after', `\n${KEY_NOTE}`)
    .examples('agents server backup /backups/agents.db --with-key')
    .action((file: string, opts: TargetFlags & { withKey?: boolean }, cmd: Command) =>
      runner.run(
        cmd,
        'server backup',
        async (ctx) => {
          const r = await (await admin()).backup(targetOf(cmd, opts, ctx.io.env), file, opts.withKey === true);
          ctx.ui.done(`backed up ${r.database} to ${r.file}`);
          if (r.keyFile) ctx.ui.done(`the secret key is in ${r.keyFile}: keep it as safe as the server's own`);
          else
            ctx.ui.warn(
              `the secret key (${r.secretKeyFile}) is not in the backup: stored secrets cannot be decrypted without it; copy it somewhere safe, or pass --with-key`,
            );
          return { data: r };
        },
        { local: true },
      ),
    );
}

function registerRestore(server: CliCommand, runner: Runner, admin: () => Promise<ServerMaintenance>): void {
  targetOptions(
    server
      .command('restore')
      .description(
        "Replace the server's database with a backup (SQLite: the server must be stopped; PostgreSQL: pg_restore --clean, needs --yes)",
      )
      .argument('<file>', 'a file `agents server backup` wrote'),
  )
    .option('--with-key', 'also restore the secret key from FILE.key (the old one is kept as .pre-restore)')
    .option('--yes', 'PostgreSQL: yes, drop and replace what the database holds')
    .addHelpText('after', `\n${KEY_NOTE}`)
    .action((file: string, opts: TargetFlags & { withKey?: boolean; yes?: boolean }, cmd: Command) =>
      runner.run(
        cmd,
        'server restore',
        async (ctx) => {
          const r = await (
            await admin()
          ).restore(targetOf(cmd, opts, ctx.io.env), file, { withKey: opts.withKey === true, yes: opts.yes === true });
          ctx.ui.done(`restored ${r.database} from ${r.file}`);
          if (r.previous) ctx.ui.done(`the database it replaced is kept as ${r.previous}`);
          if (r.keyRestored) ctx.ui.done(`the secret key was restored to ${r.keyRestored}`);
          else
            ctx.ui.warn(
              `the secret key was not restored: stored secrets open only with the key of the server that wrote them (${r.secretKeyFile} must be that key)`,
            );
          if (r.pending.length > 0)
            ctx.ui.done(
              `${r.pending.length} migration(s) will be applied when the server starts (or: agents server migrate)`,
            );
          return { data: r };
        },
        { local: true },
      ),
    );
}
