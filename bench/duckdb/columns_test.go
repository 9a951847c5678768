package main

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// DuckDB reads every column of a dataset that stormaudit ingest wrote (the
// column chunks stormaudit encodes itself, issue 27): each column's nulls
// agree with the null counts of the files' statistics, every link is 32
// bytes, every origin names its row's client, and recorded_at is a UTC
// timestamp.
func TestReadsEveryColumn(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "stormaudit")
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	main, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	run("go", "build", "-C", main, "-o", bin, "./cmd/stormaudit")
	run(bin, "simulate", "-q", "-n", "400", "--outage", "30s", "--seed", "5", "-o", "fleet.ndjson")
	run(bin, "ingest", "-q", "-o", "ds", "fleet.ndjson")
	files := lit(filepath.Join(dir, "ds", "*.parquet"))

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	nulls := map[string]int64{}
	rows, err := db.QueryContext(ctx, `SELECT path_in_schema, sum(stats_null_count) FROM parquet_metadata(`+files+`) GROUP BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var col string
		var n int64
		if err := rows.Scan(&col, &n); err != nil {
			t.Fatal(err)
		}
		nulls[col] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if want := documentedColumns(t, filepath.Join(main, "dataset", "doc.go")); len(nulls) != want {
		t.Fatalf("%d columns in the metadata, want the %d dataset/doc.go lists", len(nulls), want)
	}
	var total int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM read_parquet(`+files+`)`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	for col, n := range nulls {
		var present int64
		q := `SELECT count("` + col + `") FROM read_parquet(` + files + `)`
		if err := db.QueryRowContext(ctx, q).Scan(&present); err != nil {
			t.Fatalf("%s: %v", col, err)
		}
		if total-present != n {
			t.Errorf("%s: DuckDB reads %d nulls in %d rows, the statistics say %d", col, total-present, total, n)
		}
	}
	var bad int64
	var atType string
	err = db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE octet_length(link) <> 32 OR NOT ends_with(origin, '/' || client_id) OR seq < 0),
		any_value(typeof(recorded_at)) FROM read_parquet(`+files+`)`).Scan(&bad, &atType)
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 || atType != "TIMESTAMP WITH TIME ZONE" {
		t.Errorf("%d rows with a bad link, origin or seq; recorded_at is %s", bad, atType)
	}
	t.Logf("%d rows; nulls by column: %v", total, nulls)
	if total == 0 {
		t.Error("no rows")
	}
}

// documentedColumns counts the columns of a dataset file that the
// dataset package's doc lists, a line each ("//\tname  TYPE, ..."). The
// test reads that file, so that go test's cache knows when it changed:
// the binary it builds is not a dependency it can see.
func documentedColumns(t *testing.T, doc string) int {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	n := len(regexp.MustCompile(`(?m)^//\t[a-z_]+ +(INT|BYTE_ARRAY|DOUBLE|BOOLEAN|FIXED_LEN)`).FindAll(b, -1))
	if n == 0 {
		t.Fatalf("%s lists no columns", doc)
	}
	return n
}
