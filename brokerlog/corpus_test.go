package brokerlog

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCorpusBrokerLogs reads the broker logs of the real-client corpus
// (testdata/realclients/*/broker.log, docs/corpus.md): Mosquitto 2.0.11's
// lines under the recorder's microsecond stamps, and the recorder's marks.
// Every line must be understood, and there must be one Accepted event for
// each "New client connected" line, a Closed event for each "Client ID
// ..." line, a BrokerDown for each of the
// recorder's kill marks and a Mark for each of its other marks.
func TestCorpusBrokerLogs(t *testing.T) {
	files, err := filepath.Glob("../testdata/realclients/*/broker.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no corpus broker logs under ../testdata/realclients")
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			connected, closed, kills, marks := countCorpusLines(t, file)
			log := readFile(t, file, Options{})
			checkAccounting(t, log)
			if log.Format != Mosquitto || log.Rejected != 0 {
				t.Fatalf("format %v, %d rejects: %v", log.Format, log.Rejected, log.Rejects)
			}
			counts := map[Kind]int{}
			for _, e := range log.Events {
				counts[e.Kind]++
				// the recorder's microseconds, or Mosquitto's own second for
				// a line the recorder read after that second had passed
				if e.Res != time.Microsecond && (e.Res != time.Second || e.At%int64(time.Second) != 0) {
					t.Fatalf("resolution %v: %+v", e.Res, e)
				}
				if e.Kind == BrokerDown && strings.HasPrefix(e.Detail, "corpus: ") && e.Detail != recorderKillMark {
					t.Errorf("a recorder mark taken for the kill: %+v", e)
				}
			}
			if counts[Accepted] != connected {
				t.Errorf("%d Accepted events, want %d (the \"New client connected\" lines)", counts[Accepted], connected)
			}
			if counts[Closed] != closed {
				t.Errorf("%d Closed events, want %d (the \"Client ID ...\" lines)", counts[Closed], closed)
			}
			if counts[Mark] != marks {
				t.Errorf("%d marks, want %d", counts[Mark], marks)
			}
			if counts[BrokerUp] == 0 || counts[BrokerDown] < kills {
				t.Errorf("counts %v, %d kill marks", counts, kills)
			}
		})
	}
}

// countCorpusLines counts a corpus log's lines the plain way: its
// "New client connected" lines, its "Client ID ..." lines (at the log
// types the recorder keeps, each says a connection ended), the recorder's
// kill marks, and its other marks.
func countCorpusLines(t *testing.T, file string) (connected, closed, kills, marks int) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, rest, _ := strings.Cut(sc.Text(), " ")
		switch {
		case rest == "corpus: SIGKILL sent to the broker":
			kills++
		case strings.HasPrefix(rest, "corpus: "):
			marks++
		case strings.Contains(rest, ": New client connected from "):
			connected++
		case strings.Contains(rest, ": Client "):
			closed++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return connected, closed, kills, marks
}
