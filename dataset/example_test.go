package dataset_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
)

// A FileWriter writes sorted records to one Parquet file; a FileReader
// reads them back.
func ExampleCreateFile() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "part-00000.parquet")

	at := time.Date(2026, 11, 30, 14, 17, 34, 979964000, time.UTC).UnixNano()
	recs := []auditfmt.Record{
		{ClientID: "dev-1", RecordedAt: at, Attempt: 1, BackoffDelayS: 0.7, Outcome: auditfmt.AttemptFailed,
			Has: auditfmt.HasReasonCode, ReasonCode: 0, FailureClass: auditfmt.FailTransient, Line: 1},
		{ClientID: "dev-1", RecordedAt: at + 1e9, Outcome: auditfmt.Connected, Line: 2},
	}
	w, err := dataset.CreateFile(path, []string{"fleet.ndjson"})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write(recs); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.Rows(), "rows in", w.RowGroups(), "row group")

	r, err := dataset.OpenFile(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	got := make([]auditfmt.Record, 10)
	for {
		n, err := r.Read(got)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		for _, rec := range got[:n] {
			fmt.Printf("%s:%d %s\n", r.Sources()[rec.Source], rec.Line, rec.AppendJSON(nil))
		}
	}
	// Output:
	// 2 rows in 1 row group
	// fleet.ndjson:1 {"client_id":"dev-1","attempt":1,"backoff_delay_s":0.7,"outcome":"attempt_failed","clean_session":false,"recorded_at":"2026-11-30T14:17:34.979964+00:00","failure_class":"transient","reason_code":0}
	// fleet.ndjson:2 {"client_id":"dev-1","attempt":0,"backoff_delay_s":0.0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:17:35.979964+00:00"}
}
