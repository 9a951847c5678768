package hashchain_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
	"golang.org/x/mod/sumdb/note"
)

// A collector appends records to its log, seals them with a signed
// checkpoint, and a reviewer verifies the log against the public key.
func ExampleOpenWriter() {
	dir, err := os.MkdirTemp("", "collector")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "collector.ndjson")

	// TEST ONLY: a key pair published in the test vectors. Make your own
	// with hashchain.GenerateKey.
	signer, err := note.NewSigner("PRIVATE+KEY+stormaudit.example/test-only+9107a060+AaCVQBf7DQew58PjHLtyH1i5BAT3x9jbW+u6/FjCYyZv")
	if err != nil {
		log.Fatal(err)
	}
	w, recovery, err := hashchain.OpenWriter(path, hashchain.WriterOptions{Log: "stormaudit.example/collector", Signer: signer})
	if err != nil {
		log.Fatal(err)
	}
	if recovery != nil {
		log.Print(recovery) // a torn final record was cut
	}
	for i, outcome := range []auditfmt.Outcome{auditfmt.BackoffWait, auditfmt.BackoffWait, auditfmt.Connected} {
		rec := auditfmt.Record{
			ClientID:      fmt.Sprintf("dev-%04d", 1+i%2),
			BackoffDelayS: 0.25 * float64(i),
			Outcome:       outcome,
			RecordedAt:    1796048254979964000 + int64(i)*1e9,
		}
		pos, err := w.Append(&rec)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("line %d: %s seq %d\n", pos.Index+1, pos.Origin, pos.Seq)
	}
	c, err := w.Checkpoint() // syncs, then signs
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("checkpoint: %d records\n", c.Size)

	verifier, err := note.NewVerifier("stormaudit.example/test-only+9107a060+AasRfnnulIIxdWB6BG4cZWnO0SCIeF1mncWAiuaL67Ah")
	if err != nil {
		log.Fatal(err)
	}
	report, err := hashchain.ReadLog(path, note.VerifierList(verifier))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("verified: %d records in %d chains, signed by %s, %d unsealed\n",
		report.Records, len(report.Origins), report.Signers[0], report.Unsealed)
	// Output:
	// line 1: stormaudit.example/collector/dev-0001 seq 0
	// line 2: stormaudit.example/collector/dev-0002 seq 0
	// line 3: stormaudit.example/collector/dev-0001 seq 1
	// checkpoint: 3 records
	// verified: 3 records in 2 chains, signed by stormaudit.example/test-only, 0 unsealed
}
