package hashchain_test

import (
	"bytes"
	"fmt"
	"log"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// One record through the whole scheme: its canonical bytes R, its place
// in its device's chain, its tree leaf and a signed checkpoint.
func Example() {
	line := `{"client_id": "dev-0001", "attempt": 0, "backoff_delay_s": 0.21, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34.979964+00:00", "rssi": -71}`
	var dec auditfmt.Decoder
	var rec auditfmt.Record
	if err := dec.Decode([]byte(line), &rec); err != nil {
		log.Fatal(err)
	}
	R, err := hashchain.AppendRecordBytes(nil, &rec)
	if err != nil {
		log.Fatal(err)
	}
	const logName = "stormaudit.example/incident"
	chains := hashchain.NewChains(logName, true)
	pos := chains.Append(rec.ClientID, hashchain.RecordHash(R))

	var tree hashchain.Tree
	tree.Append(hashchain.Leaf(pos))
	checkpoint := hashchain.Checkpoint{Origin: logName, Size: tree.Size(), Root: tree.Root()}

	// TEST ONLY: a secret key published in the test vectors.
	signer, err := note.NewSigner("PRIVATE+KEY+stormaudit.example/test-only+9107a060+AaCVQBf7DQew58PjHLtyH1i5BAT3x9jbW+u6/FjCYyZv")
	if err != nil {
		log.Fatal(err)
	}
	signed, err := hashchain.SignCheckpoint(checkpoint, signer)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("R: %s\n%s seq %d link %v\n\n%s", R, pos.Origin, pos.Seq, pos.Link, signed)
	// Output:
	// R: {"record":{"attempt":0,"backoff_delay_s":0.21,"clean_session":false,"client_id":"dev-0001","outcome":"backoff_wait","recorded_at":"2026-11-30T14:17:34.979964+00:00","rssi":-71}}
	// stormaudit.example/incident/dev-0001 seq 0 link v3EvJlbjwM7Gv6t+gc2Ftravdaaup6RgdUKpj5fkHGM=
	//
	// stormaudit.example/incident
	// 1
	// MRnSAI9fxKYWeJ2l677kgVXoljq9o+fK663IQFrC4RE=
	//
	// — stormaudit.example/test-only kQegYAhSaQdwO2Vg/Q8oiM8mLbHf4oEvx6BwU1sHKMpfhEp5TvcTRlmLyWe6LmpfTnh2mgkJ3eBGN5zdznlql8KH8wE=
}

func ExampleOpenCheckpoint() {
	signed := []byte("stormaudit.example/incident\n" +
		"5\n" +
		"IgFFoPUXZ63i0+KJVJ4u60CjaV9pGWtzDYoH7+KNDWM=\n" +
		"\n" +
		"— stormaudit.example/test-only kQegYA+n1uV/yJGTuZZEqyz0zQu1s+U7uOLOtCCQsyab2Ap+hlUBZxuDALHlzMMY2GEKLP0W5WOPRcfH0rndCTP72Ao=\n")
	verifier, err := note.NewVerifier("stormaudit.example/test-only+9107a060+AasRfnnulIIxdWB6BG4cZWnO0SCIeF1mncWAiuaL67Ah")
	if err != nil {
		log.Fatal(err)
	}
	c, _, err := hashchain.OpenCheckpoint(signed, note.VerifierList(verifier))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Origin, c.Size, c.Root)

	// The same checkpoint claiming a larger tree.
	forged := bytes.Replace(signed, []byte("\n5\n"), []byte("\n6\n"), 1)
	_, _, err = hashchain.OpenCheckpoint(forged, note.VerifierList(verifier))
	fmt.Println(err)
	// Output:
	// stormaudit.example/incident 5 IgFFoPUXZ63i0+KJVJ4u60CjaV9pGWtzDYoH7+KNDWM=
	// hashchain: changed after it was signed: invalid signature for key stormaudit.example/test-only+9107a060
}
