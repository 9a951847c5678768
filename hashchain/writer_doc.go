// # The collector log
//
// A Go collector chains records as they arrive, in an append-only,
// crash-safe, signed log file: NDJSON, one record a line,
//
//	{"chain":{"link":"LINK","origin":"LOG/CLIENT_ID","seq":SEQ},"audit":{...record...}}
//
// with one chain per device as above, the tree over the lines' leaves in
// file order, and the latest checkpoint in PATH.checkpoint, signed when
// the writer has a signer. docs/hashchain.md, "The collector log", is the
// format.
//
// [OpenWriter] takes the log's lock, verifies what the log holds, cuts
// (and reports in a [Recovery]) a torn final record that a crash left, and
// returns a [Writer]. [Writer.Append] chains a record and returns its
// [Position]; encoding and writing happen in the background, and
// [Writer.Sync] makes every appended record durable. [Writer.Checkpoint]
// syncs, then signs and atomically replaces the checkpoint file.
// [ReadLog] verifies a log and its checkpoint without writing, and returns
// a [LogReport] or a [LogError] naming the first bad line.
// [ParseChainEnvelope] reads the chain position of a record that arrives
// already chained.
//
//	w, rec, err := hashchain.OpenWriter("collector.ndjson", hashchain.WriterOptions{Log: "example.org/collector", Signer: signer})
//	if rec != nil {
//		log.Print(rec) // a torn record was cut
//	}
//	pos, err := w.Append(&record)
//	...
//	c, err := w.Checkpoint() // durable and signed
//	err = w.Close()
//
//	report, err := hashchain.ReadLog("collector.ndjson", verifiers)
package hashchain
