/**
 * The Postgres store's statements, for one schema. Each write is ONE statement: the
 * conditional update of the run row (lease epoch and next seq) takes the row lock, and the
 * inserts of the same statement draw their run id from it, so a refused claim inserts
 * nothing and a concurrent appender waits for the lock, then finds the count moved on.
 */

/** A double-quoted identifier; `schema` is checked to be a plain name before it gets here. */
const q = (name: string): string => `"${name}"`;

/** The statements of a store over `schema`. */
export function postgresStatements(schema: string) {
  const s = `${q(schema)}.`;
  const runsSelect = `SELECT * FROM ${s}runs`;
  return {
    insertRun: `INSERT INTO ${s}runs (id, status, reason, model, config, config_hash, parent_run_id, created_at, updated_at, totals, lease_epoch, event_count)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    getRun: `${runsSelect} WHERE id = $1`,
    runState: `SELECT lease_epoch, event_count FROM ${s}runs WHERE id = $1`,
    lease: `UPDATE ${s}runs SET lease_epoch = lease_epoch + 1, updated_at = $2 WHERE id = $1 RETURNING lease_epoch`,
    // $1 run, $2 epoch, $3 first seq, $4 count, $5 now; events as arrays $6–$9; payloads $10–$11.
    append: `WITH claimed AS (
        UPDATE ${s}runs SET event_count = event_count + $4, updated_at = $5
        WHERE id = $1 AND lease_epoch = $2 AND event_count = $3
        RETURNING id
      ), stored_payloads AS (
        INSERT INTO ${s}payloads (run_id, seq, data)
        SELECT claimed.id, p.seq, p.data FROM claimed, unnest($10::integer[], $11::text[]) AS p(seq, data)
      )
      INSERT INTO ${s}events (run_id, seq, type, at, data)
      SELECT claimed.id, e.seq, e.type, e.at, e.data FROM claimed, unnest($6::integer[], $7::text[], $8::bigint[], $9::text[]) AS e(seq, type, at, data)`,
    load: `SELECT coalesce(e.data, p.data) FROM ${s}events e LEFT JOIN ${s}payloads p ON p.run_id = e.run_id AND p.seq = e.seq
      WHERE e.run_id = $1 AND e.seq >= $2 ORDER BY e.seq`,
    update: `UPDATE ${s}runs SET status = $3, reason = $4, totals = coalesce($5, totals), updated_at = $6 WHERE id = $1 AND lease_epoch = $2`,
    /** One text per filter shape, so each gets a plan that uses its index. `$1` is the limit (NULL: all). */
    list(status: boolean, before: boolean, parent = false): string {
      // The filters' values follow the limit ($1) in this order, each present only when used.
      let n = 1;
      const where = [
        status ? `status = $${++n}` : '',
        before ? `created_at < $${++n}` : '',
        parent ? `parent_run_id = $${++n}` : '',
      ].filter(Boolean);
      return `${runsSelect} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT $1`;
    },
  };
}

/** The statements of one schema. */
export type PostgresStatements = ReturnType<typeof postgresStatements>;
