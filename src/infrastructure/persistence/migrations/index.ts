import type { Migration } from 'kysely/migration';
import {
  m0001_initial,
  m0002_registries,
  m0003_plans,
  m0004_task_counts,
  m0005_message_keys_and_runners,
} from './0001-0005.ts';
import { m0006_push_outbox, m0007_retention, m0008_chat, m0009_accounts, m0010_sync } from './0006-0010.ts';
import {
  m0011_postgres_collation,
  m0012_session_forks,
  m0013_grants_and_secrets,
  m0014_turn_changes,
  m0015_session_context,
  m0016_command_output,
} from './0011-0016.ts';
import { m0017_usage_limits } from './0017.ts';
import { m0018_model_usage } from './0018.ts';
import { m0019_auth_changes } from './0019.ts';

/*
 * The migration list. Each group of five lives in its own file (`0001-0005.ts`, …); this index
 * names them all in one place, in the order they run. Never edit a migration that has shipped:
 * add the next one to the last group's file (or start a new group) and list it here.
 */
export { backfillTaskCounts } from './0001-0005.ts';

/** Every migration, by name; names sort in the order they must run. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial': m0001_initial,
  '0002_registries': m0002_registries,
  '0003_plans': m0003_plans,
  '0004_task_counts': m0004_task_counts,
  '0005_message_keys_and_runners': m0005_message_keys_and_runners,
  '0006_push_outbox': m0006_push_outbox,
  '0007_retention': m0007_retention,
  '0008_chat': m0008_chat,
  '0009_accounts': m0009_accounts,
  '0010_sync': m0010_sync,
  '0011_postgres_collation': m0011_postgres_collation,
  '0012_session_forks': m0012_session_forks,
  '0013_grants_and_secrets': m0013_grants_and_secrets,
  '0014_turn_changes': m0014_turn_changes,
  '0015_session_context': m0015_session_context,
  '0016_command_output': m0016_command_output,
  '0017_usage_limits': m0017_usage_limits,
  '0018_model_usage': m0018_model_usage,
  '0019_auth_changes': m0019_auth_changes,
};
