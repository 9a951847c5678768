// Command duckpeer does in DuckDB SQL the work that stormaudit's ingest and
// check do, so that bench/vs-duckdb.sh can time the two side by side. It is
// its own module so that the main module stays free of cgo and DuckDB.
//
//	duckpeer ingest IN.ndjson OUT.parquet        NDJSON to sorted zstd Parquet
//	duckpeer check PARQUET_GLOB                  the two aggregates, a summary line
//	duckpeer check-json PARQUET_GLOB OUT.json    the same, per device as a JSON array
//	duckpeer check-ndjson IN.ndjson              the same over the raw NDJSON
//	duckpeer version                             the DuckDB version
//
// The two aggregates stand in for stormaudit's rules. Every rule reads a
// device's records in order, so the first orders each device's records
// (a window partitioned by client_id) and computes three of the rules on
// them: delays above the full-jitter ceiling min(120, 2^attempt)
// (delay-bounds), counters reset to 0 without a connect before
// (reset-without-connack), and socket-opens (recorded_at plus the delay)
// closer than 250 ms to the one before (spacing); the second counts
// socket-opens (records with outcome backoff_wait) per second of the fleet.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"
)

const usage = `usage:
  duckpeer ingest IN.ndjson OUT.parquet
  duckpeer check PARQUET_GLOB
  duckpeer check-json PARQUET_GLOB OUT.json
  duckpeer check-ndjson IN.ndjson
  duckpeer version`

// perDevice and perSecond are the two aggregates, over the relation r.
const (
	perDevice = `SELECT client_id, count(*) AS records, max(backoff_delay_s) AS max_delay_s,
	count_if(outcome = 'attempt_failed') AS failed,
	count_if(outcome = 'backoff_wait' AND backoff_delay_s > least(120, pow(2, attempt))) AS delay_bounds,
	count_if(attempt = 0 AND prev_attempt > 0 AND prev_outcome <> 'connected') AS reset_without_connack,
	count_if(outcome = 'backoff_wait' AND opens_at - prev_open < INTERVAL 250 MILLISECONDS) AS spacing
	FROM (SELECT client_id, attempt, outcome, backoff_delay_s,
		lag(attempt) OVER d AS prev_attempt, lag(outcome) OVER d AS prev_outcome,
		recorded_at + to_microseconds(CAST(backoff_delay_s * 1e6 AS BIGINT)) AS opens_at,
		lag(recorded_at + to_microseconds(CAST(backoff_delay_s * 1e6 AS BIGINT))) OVER d AS prev_open
		FROM r WINDOW d AS (PARTITION BY client_id ORDER BY recorded_at))
	GROUP BY client_id`
	perSecond = `SELECT epoch_us(recorded_at) // 1000000 AS second, count(*) AS opens
	FROM r WHERE outcome = 'backoff_wait' GROUP BY second`
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "duckpeer:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no command\n%s", usage)
	}
	want := map[string]int{"ingest": 2, "check": 1, "check-json": 2, "check-ndjson": 1, "version": 0}
	n, ok := want[args[0]]
	if !ok || len(args)-1 != n {
		return fmt.Errorf("bad command line %q\n%s", strings.Join(args, " "), usage)
	}
	ctx := context.Background()
	db, err := sql.Open("duckdb", "") // in memory, default threads
	if err != nil {
		return err
	}
	defer db.Close()
	// One connection: the temporary view or table r lives on it.
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	exec := func(query string) error {
		if _, err := conn.ExecContext(ctx, query); err != nil {
			return fmt.Errorf("%s: %w", args[0], err)
		}
		return nil
	}

	switch args[0] {
	case "version":
		var v string
		if err := conn.QueryRowContext(ctx, `SELECT version()`).Scan(&v); err != nil {
			return err
		}
		fmt.Println("DuckDB", v)
		return nil
	case "ingest":
		return exec(fmt.Sprintf(`COPY (SELECT * FROM %s ORDER BY client_id, recorded_at)
			TO %s (FORMAT parquet, COMPRESSION zstd)`, readNDJSON(args[1]), lit(args[2])))
	case "check-json":
		if err := exec(`CREATE TEMP VIEW r AS SELECT * FROM read_parquet(` + lit(args[1]) + `)`); err != nil {
			return err
		}
		if err := exec(`COPY (` + perDevice + ` ORDER BY client_id) TO ` + lit(args[2]) + ` (FORMAT json, ARRAY true)`); err != nil {
			return err
		}
		var peak sql.NullInt64
		if err := conn.QueryRowContext(ctx, `SELECT max(opens) FROM (`+perSecond+`)`).Scan(&peak); err != nil {
			return fmt.Errorf("%s: %w", args[0], err)
		}
		fmt.Printf("peak %d socket opens per second\n", peak.Int64)
		return nil
	case "check":
		if err := exec(`CREATE TEMP VIEW r AS SELECT * FROM read_parquet(` + lit(args[1]) + `)`); err != nil {
			return err
		}
	case "check-ndjson":
		// Parse the NDJSON once, into memory, then aggregate as over Parquet.
		if err := exec(`CREATE TEMP TABLE r AS SELECT * FROM ` + readNDJSON(args[1])); err != nil {
			return err
		}
	}
	var devices, rows, failed, bounds, resets, spacing, peak sql.NullInt64
	var maxDelay sql.NullFloat64
	err = conn.QueryRowContext(ctx, `WITH d AS (`+perDevice+`), s AS (`+perSecond+`)
		SELECT count(*), sum(records), max(max_delay_s), sum(failed), sum(delay_bounds), sum(reset_without_connack),
		sum(spacing), (SELECT max(opens) FROM s) FROM d`,
	).Scan(&devices, &rows, &maxDelay, &failed, &bounds, &resets, &spacing, &peak)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	fmt.Printf("%d devices, %d rows (%d failed attempts, longest delay %.3fs); delays out of bounds %d, resets without a connect %d, "+
		"opens too close %d; peak %d socket opens per second\n",
		devices.Int64, rows.Int64, failed.Int64, maxDelay.Float64, bounds.Int64, resets.Int64, spacing.Int64, peak.Int64)
	return nil
}

// readNDJSON is the table function reading the seed-format NDJSON at path.
func readNDJSON(path string) string {
	return `read_json(` + lit(path) + `, format = 'newline_delimited', columns = {
		client_id: 'VARCHAR', attempt: 'BIGINT', backoff_delay_s: 'DOUBLE',
		outcome: 'VARCHAR', clean_session: 'BOOLEAN', recorded_at: 'TIMESTAMPTZ'})`
}

// lit quotes s as an SQL string literal (file names cannot be bound parameters).
func lit(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
