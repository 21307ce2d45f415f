import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The first schema. Closed sets (statuses, verdicts, origins) are not CHECK constraints: SQLite
 * cannot change a CHECK without rebuilding the table, so they are validated with zod on write and
 * read instead. JSON columns must hold valid JSON; references are foreign keys.
 */
export const initialSchemaMigration: Migration = {
  /**
   * Longer than convention 4's 60 lines: it is the first schema, every table and index created in
   * one migration (one transaction), in the order their foreign keys need; a migration, once
   * shipped, is never edited, so it stays read as it ran.
   */
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('runs')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('status', 'text', (column) => column.notNull())
      .addColumn('strategy', 'text', (column) => column.notNull())
      .addColumn('model', 'text', (column) => column.notNull())
      .addColumn('config_json', 'text', (column) => column.notNull().check(sql`json_valid(config_json)`))
      .addColumn('error', 'text')
      .addColumn('started_at', 'text', (column) => column.notNull())
      .addColumn('updated_at', 'text', (column) => column.notNull())
      .addColumn('finished_at', 'text')
      .execute();
    await db.schema.createIndex('runs_started_at').on('runs').column('started_at').execute();

    await db.schema
      .createTable('problems')
      .addColumn('hash', 'text', (column) => column.primaryKey())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('source', 'text', (column) => column.notNull())
      .addColumn('path', 'text')
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();

    await db.schema
      .createTable('run_problems')
      .addColumn('run_id', 'text', (column) => column.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('problem_hash', 'text', (column) => column.notNull().references('problems.hash'))
      .addColumn('position', 'integer', (column) => column.notNull())
      .addPrimaryKeyConstraint('run_problems_primary_key', ['run_id', 'problem_hash'])
      .execute();

    await db.schema
      .createTable('model_calls')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (column) => column.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('problem_hash', 'text', (column) => column.references('problems.hash'))
      .addColumn('round', 'integer')
      .addColumn('model', 'text', (column) => column.notNull())
      .addColumn('messages_json', 'text', (column) => column.notNull().check(sql`json_valid(messages_json)`))
      .addColumn('reply_text', 'text')
      .addColumn('reasoning_text', 'text')
      .addColumn('input_tokens', 'integer')
      .addColumn('output_tokens', 'integer')
      .addColumn('latency_ms', 'real')
      .addColumn('cost_usd', 'real')
      .addColumn('error', 'text')
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('model_calls_run').on('model_calls').columns(['run_id', 'problem_hash']).execute();

    await db.schema
      .createTable('ideas')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (column) => column.notNull())
      .addColumn('problem_hash', 'text', (column) => column.notNull())
      .addColumn('round', 'integer', (column) => column.notNull())
      .addColumn('label', 'text', (column) => column.notNull())
      .addColumn('text', 'text', (column) => column.notNull())
      .addColumn('status', 'text', (column) => column.notNull())
      .addColumn('created_at', 'text', (column) => column.notNull())
      .addColumn('updated_at', 'text', (column) => column.notNull())
      .addForeignKeyConstraint('ideas_run_problem', ['run_id', 'problem_hash'], 'run_problems', ['run_id', 'problem_hash'], (constraint) =>
        constraint.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('ideas_run').on('ideas').columns(['run_id', 'problem_hash']).execute();

    await db.schema
      .createTable('candidates')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (column) => column.notNull())
      .addColumn('problem_hash', 'text', (column) => column.notNull())
      .addColumn('parent_id', 'integer', (column) => column.references('candidates.id'))
      .addColumn('round', 'integer', (column) => column.notNull())
      .addColumn('idea_id', 'integer', (column) => column.references('ideas.id').onDelete('set null'))
      .addColumn('idea_label', 'text')
      .addColumn('source', 'text', (column) => column.notNull())
      .addColumn('source_hash', 'text', (column) => column.notNull())
      .addColumn('origin', 'text', (column) => column.notNull())
      .addColumn('model_call_id', 'integer', (column) => column.references('model_calls.id'))
      .addColumn('created_at', 'text', (column) => column.notNull())
      .addForeignKeyConstraint('candidates_run_problem', ['run_id', 'problem_hash'], 'run_problems', ['run_id', 'problem_hash'], (constraint) =>
        constraint.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('candidates_run').on('candidates').columns(['run_id', 'problem_hash']).execute();
    await db.schema.createIndex('candidates_parent').on('candidates').column('parent_id').execute();

    await db.schema
      .createTable('evaluations')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('candidate_id', 'integer', (column) => column.notNull().unique().references('candidates.id').onDelete('cascade'))
      .addColumn('run_id', 'text', (column) => column.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('problem_hash', 'text', (column) => column.notNull())
      .addColumn('result_json', 'text', (column) => column.notNull().check(sql`json_valid(result_json)`))
      .addColumn('verdict', 'text', (column) => column.notNull())
      .addColumn('speedup_vs_eager', 'real')
      .addColumn('speedup_vs_compile', 'real')
      .addColumn('speedup_vs_best', 'real')
      .addColumn('candidate_median_ms', 'real')
      .addColumn('gpu_seconds', 'real', (column) => column.notNull())
      .addColumn('options_hash', 'text', (column) => column.notNull())
      .addColumn('cache_key', 'text', (column) => column.notNull())
      .addColumn('reused_from_evaluation_id', 'integer', (column) => column.references('evaluations.id'))
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('evaluations_cache_key').on('evaluations').column('cache_key').execute();
    await db.schema.createIndex('evaluations_run').on('evaluations').columns(['run_id', 'problem_hash']).execute();

    await db.schema
      .createTable('events')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (column) => column.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('problem_hash', 'text', (column) => column.references('problems.hash'))
      .addColumn('type', 'text', (column) => column.notNull())
      .addColumn('payload_json', 'text', (column) => column.notNull().check(sql`json_valid(payload_json)`))
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('events_run').on('events').columns(['run_id', 'id']).execute();

    await db.schema
      .createTable('actions')
      .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (column) => column.notNull().references('runs.id').onDelete('cascade'))
      .addColumn('problem_hash', 'text', (column) => column.references('problems.hash'))
      .addColumn('type', 'text', (column) => column.notNull())
      .addColumn('candidate_id', 'integer', (column) => column.references('candidates.id'))
      .addColumn('idea_id', 'integer', (column) => column.references('ideas.id').onDelete('set null'))
      .addColumn('note', 'text')
      .addColumn('created_at', 'text', (column) => column.notNull())
      .execute();
    await db.schema.createIndex('actions_run').on('actions').columns(['run_id', 'id']).execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    for (const table of ['actions', 'events', 'evaluations', 'candidates', 'ideas', 'model_calls', 'run_problems', 'problems', 'runs']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
