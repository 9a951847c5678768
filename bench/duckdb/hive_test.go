package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// DuckDB reads a dataset that `stormaudit ingest --buckets` wrote with
// Hive partitioning: the bucket of each row is its directory's, every
// device is in the bucket its client id hashes to (32-bit FNV-1a modulo
// the buckets), and every row is read once.
func TestHivePartitionedDataset(t *testing.T) {
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
	run(bin, "simulate", "-q", "-n", "500", "--outage", "30s", "--seed", "3", "-o", "fleet.ndjson")
	const buckets = 8
	run(bin, "ingest", "-q", "--buckets", "8", "-o", "ds", "fleet.ndjson")
	var man struct {
		Rows    int64 `json:"rows"`
		Buckets int   `json:"buckets"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "ds", "manifest.json"))
	if err != nil || json.Unmarshal(b, &man) != nil || man.Buckets != buckets {
		t.Fatalf("manifest: %v %+v", err, man)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), `SELECT client_id, CAST(bucket AS INTEGER), count(*)
		FROM read_parquet(`+lit(filepath.Join(dir, "ds", "*", "*.parquet"))+`, hive_partitioning = true) GROUP BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var total int64
	devices := map[string]int{}
	for rows.Next() {
		var id string
		var bucket int
		var n int64
		if err := rows.Scan(&id, &bucket, &n); err != nil {
			t.Fatal(err)
		}
		h := fnv.New32a()
		h.Write([]byte(id))
		if want := int(h.Sum32() % buckets); bucket != want {
			t.Errorf("%s read from bucket %d, hashes to %d", id, bucket, want)
		}
		devices[id]++
		total += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id, k := range devices {
		if k != 1 {
			t.Errorf("%s in %d buckets", id, k)
		}
	}
	if len(devices) != 500 || total != man.Rows {
		t.Errorf("DuckDB read %d devices and %d rows; the dataset holds 500 and %d", len(devices), total, man.Rows)
	}
}
