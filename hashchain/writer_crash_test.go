package hashchain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// crashEnv tells the test binary that it is the child of TestWriterCrash:
// PATH,START,SYNC_EVERY.
const crashEnv = "HASHCHAIN_CRASH_CHILD"

// crashRecord is the i-th record the crash test's children append.
func crashRecord(i int) auditfmt.Record { return genFleetRecord(i, 37) }

// TestWriterCrashChild is the process TestWriterCrash kills: it opens the
// log, appends crashRecord(START), crashRecord(START+1), ..., syncs every
// SYNC_EVERY records and prints "durable N" (N records in the log are
// durable) each time Sync returns; every fifth time it checkpoints instead
// and prints "checkpoint N" first. Without crashEnv it does nothing.
func TestWriterCrashChild(t *testing.T) {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		t.Skip("the child process of TestWriterCrash")
	}
	parts := strings.Split(spec, ",")
	path := parts[0]
	start, _ := strconv.Atoi(parts[1])
	every, _ := strconv.Atoi(parts[2])
	signer, _ := testKeys(t)
	w, _, err := OpenWriter(path, WriterOptions{Log: testLog, Signer: signer})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	fmt.Println("ready", start)
	for i := start; i < start+1_000_000; i++ {
		r := crashRecord(i)
		if pos, err := w.Append(&r); err != nil || pos.Index != int64(i) {
			fmt.Println("error", pos, err)
			os.Exit(3)
		}
		if (i+1-start)%every != 0 {
			continue
		}
		if (i+1-start)/every%5 == 0 {
			c, err := w.Checkpoint()
			if err != nil {
				fmt.Println("error", err)
				os.Exit(3)
			}
			fmt.Println("checkpoint", c.Size)
		} else if err := w.Sync(); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Println("durable", i+1)
	}
	fmt.Println("done")
	time.Sleep(time.Minute) // until killed
	os.Exit(4)
}

// A crashRun is what the parent saw of one child.
type crashRun struct {
	ready      bool
	durable    int64 // the most records reported durable
	checkpoint int64 // the largest checkpoint reported
	errors     []string
}

func TestWriterCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes; skipped with -short")
	}
	const runs, runsPerLog = 100, 5
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d", seed)
	_, verifiers := testKeys(t)
	began := time.Now()
	var path string
	var records, total, cuts, killCuts, lostTails, beforeReady int64
	for run := range runs {
		if run%runsPerLog == 0 {
			path = filepath.Join(t.TempDir(), "collector.ndjson")
			records = 0
		}
		every := 1 + rng.IntN(300)
		if rng.IntN(2) == 0 { // mostly writing, rarely syncing: kills land in writes
			every = 1000 + rng.IntN(20_000)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriterCrashChild$", "-test.count=1", "-test.timeout=2m")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", crashEnv, path, records, every))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var seen crashRun
		ready, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				word, arg, _ := strings.Cut(sc.Text(), " ")
				n, _ := strconv.ParseInt(arg, 10, 64)
				switch word {
				case "ready":
					seen.ready = true
					close(ready)
				case "durable":
					seen.durable = n
				case "checkpoint":
					seen.checkpoint = n
				case "error":
					seen.errors = append(seen.errors, sc.Text())
				}
			}
		}()
		if rng.IntN(10) == 0 { // sometimes while it opens (and recovers) the log
			beforeReady++
			time.Sleep(time.Duration(rng.IntN(15_000)) * time.Microsecond)
		} else {
			select {
			case <-ready:
			case <-time.After(30 * time.Second):
				t.Fatal("the child did not start")
			}
			time.Sleep(time.Duration(rng.IntN(25_000)) * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		<-done
		if len(seen.errors) > 0 {
			t.Fatalf("run %d: child: %v", run, seen.errors)
		}
		// Sometimes also lose what was written but not yet durable, as a
		// power cut can: cut the log anywhere after its durable records.
		lost := rng.IntN(3) == 0 && lostTail(t, path, max(records, seen.durable, seen.checkpoint), rng)
		if lost {
			lostTails++
		}
		w, rec, err := OpenWriter(path, WriterOptions{Log: testLog})
		if err != nil {
			t.Fatalf("run %d: reopen after the kill: %v", run, err)
		}
		if rec != nil {
			cuts++
			if !lost {
				killCuts++
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		vs := verifiers
		if _, err := os.Stat(path + ".checkpoint"); err != nil {
			vs = nil // no checkpoint yet
		}
		rep, err := ReadLog(path, vs)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if rep.Records < seen.durable || (seen.checkpoint > 0 && (rep.Checkpoint == nil || rep.Checkpoint.Size < seen.checkpoint)) {
			t.Fatalf("run %d: the log has %d records and checkpoint %+v; the child reported %d durable and a checkpoint of %d",
				run, rep.Records, rep.Checkpoint, seen.durable, seen.checkpoint)
		}
		checkCrashRecords(t, path, records)
		total += rep.Records - records
		records = rep.Records
	}
	t.Logf("%d runs in %v, %d records appended and verified; %d kills before the writer was ready; %d simulated losses of unsynced data; %d torn tails recovered (%d left by the kill itself)",
		runs, time.Since(began).Round(time.Millisecond), total, beforeReady, lostTails, cuts, killCuts)
}

// lostTail cuts the log at a random point after its first durable
// records, and after the records its checkpoint covers (the child can die
// between writing a checkpoint and saying so), and reports whether it cut
// anything.
func lostTail(t *testing.T, path string, durable int64, rng *rand.Rand) bool {
	if msg, err := os.ReadFile(path + ".checkpoint"); err == nil {
		c, _, _, err := readCheckpointFile(msg, nil)
		if err != nil {
			t.Fatal(err)
		}
		durable = max(durable, c.Size)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) { // killed before it created the log
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	end := 0
	for n := int64(0); n < durable; n++ {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			t.Fatalf("the log holds fewer than the %d durable records", durable)
		}
		end += i + 1
	}
	if end == len(data) {
		return false
	}
	if err := os.Truncate(path, int64(end+rng.IntN(len(data)-end))); err != nil {
		t.Fatal(err)
	}
	return true
}

// checkCrashRecords checks that the records of the log from index from on
// are crashRecord(from), crashRecord(from+1), ...
func checkCrashRecords(t *testing.T, path string, from int64) {
	t.Helper()
	for i, r := range readRecords(t, path)[from:] {
		want := crashRecord(int(from) + i)
		if !bytes.Equal(recordBytes(t, &r), recordBytes(t, &want)) {
			t.Fatalf("record %d is %s, want %s", int(from)+i, recordBytes(t, &r), recordBytes(t, &want))
		}
	}
}
