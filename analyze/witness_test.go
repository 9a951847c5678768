package analyze

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/brokerlog"
	"github.com/stormaudit/stormaudit/ingest"
)

// checkWitness checks the audit log name of testdata/witness beside its
// broker log.
func checkWitness(t *testing.T, name string) *Result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "witness", name+"-broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blog, err := LoadBrokerLog(f, name+"-broker.log", brokerlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join("testdata", "witness", name+".ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	return checkLogWith(t, string(log), Options{Broker: []*BrokerLog{blog}})
}

// TestWitnessRules: a second owner's connect (dev-01), a connect the
// broker never saw (dev-02) and a takeover by a second device with the
// same client id (dev-03) are flagged on exactly those devices, a
// takeover of a session dev-04 had recorded lost is not; the same
// fleet with nothing amiss is not; and dev-06's clock, 3 s ahead, is
// found from whole-second stamps within 0.6 s in both.
func TestWitnessRules(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		unaudited, unseen, takeover []string
	}{
		{"positive", []string{"dev-01", "dev-03"}, []string{"dev-02"}, []string{"dev-03"}},
		{"negative", nil, nil, nil},
	} {
		res := checkWitness(t, tc.name)
		for _, r := range []struct {
			rule string
			want []string
		}{{unauditedConnectID, tc.unaudited}, {unseenConnectID, tc.unseen}, {sessionTakeoverID, tc.takeover}} {
			if got := devicesOf(res, r.rule); !slices.Equal(got, r.want) {
				t.Errorf("%s: %s on %v, want %v:%s", tc.name, r.rule, got, r.want, describe(of(res, r.rule)))
			}
		}
		offs := res.Summary.Fleet.ClockOffsets
		if len(offs) != 1 || offs[0].Device != "dev-06" || offs[0].Basis != BasisBroker || (offs[0].Offset-3*time.Second).Abs() > 600*time.Millisecond {
			t.Errorf("%s: clock offsets %+v, want dev-06 3s ahead of the broker", tc.name, offs)
		}
		w := res.Summary.Fleet.Witness
		if w == nil || len(w.Logs) != 1 || w.Logs[0].Accepts == 0 {
			t.Fatalf("%s: witness %+v", tc.name, w)
		}
		if len(res.Summary.Fleet.Incidents) != 1 || res.Summary.Fleet.Incidents[0].Broker == nil || res.Summary.Fleet.Incidents[0].DevicesLost != 6 {
			t.Errorf("%s: incidents %+v, want the one at 20 s with the broker's view", tc.name, res.Summary.Fleet.Incidents)
		}
	}
}

// TestWitnessLeftOutWithoutBrokerLog: without a broker log the rules that
// need one are not in the check's rules, and the summary has no witness.
func TestWitnessLeftOutWithoutBrokerLog(t *testing.T) {
	log, err := os.ReadFile(filepath.Join("testdata", "witness", "positive.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	res := checkLog(t, string(log), nil)
	for _, r := range res.Rules {
		if r.ID == unauditedConnectID || r.ID == unseenConnectID || r.ID == sessionTakeoverID {
			t.Errorf("%s ran without a broker log", r.ID)
		}
	}
	if res.Summary.Fleet.Witness != nil {
		t.Errorf("a witness without a broker log")
	}
}

// TestSplitWithBrokerLog: a split check (each part, its partial through
// bytes, finished elsewhere) gives what Check gives with a broker log,
// whether the log is given or stored with the dataset: the witness, the
// broker's clock offsets and the rules that need it (a regression: the
// finishing check decoded partials without the broker's log).
func TestSplitWithBrokerLog(t *testing.T) {
	for _, tc := range []struct {
		log, broker string
		presence    bool // its devices declare wills: every incident has a presence
	}{
		{"testdata/witness/positive.ndjson", "testdata/witness/positive-broker.log", false},
		{"../testdata/realclients/paho-py-clockskew/clients.ndjson", "../testdata/realclients/paho-py-clockskew/broker.log", false},
		{"../testdata/realclients/paho-py-presence/clients.ndjson", "../testdata/realclients/paho-py-presence/broker.log", true},
	} {
		data, err := os.ReadFile(tc.broker)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 3} {
			dir := filepath.Join(t.TempDir(), "ds")
			_, err := ingest.Run(context.Background(), dir, []ingest.Source{{Name: tc.log}},
				ingest.Options{Buckets: n, BrokerLogs: []ingest.BrokerSource{{Name: tc.broker, Data: data}}})
			if err != nil {
				t.Fatal(err)
			}
			stored := sameResult(t, dir, Options{})
			blog, err := LoadBrokerLog(bytes.NewReader(data), tc.broker, brokerlog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			given := sameResult(t, bucketed(t, n, tc.log), Options{Broker: []*BrokerLog{blog}})
			for _, res := range []*Result{stored, given} {
				if w := res.Summary.Fleet.Witness; w == nil || w.Paired == 0 || len(res.Summary.Fleet.ClockOffsets) == 0 && !tc.presence {
					t.Errorf("%s in %d buckets: no witness or no offsets: %+v", tc.log, n, res.Summary.Fleet.ClockOffsets)
				}
				for _, in := range res.Summary.Fleet.Incidents {
					if (in.Broker != nil && in.Broker.Presence != nil) != tc.presence {
						t.Errorf("%s in %d buckets: an incident's presence %v, want one: %v", tc.log, n, in.Broker, tc.presence)
					}
				}
			}
			if !reflect.DeepEqual(stored.Findings, given.Findings) {
				t.Errorf("%s in %d buckets: the stored broker log finds %d, the given one %d", tc.log, n, len(stored.Findings), len(given.Findings))
			}
		}
	}
}

// TestBrokerLogRejectsNoted: a broker log's lines that could not be read
// are counted in the summary's notes, the first named.
func TestBrokerLogRejectsNoted(t *testing.T) {
	blog, err := LoadBrokerLog(strings.NewReader("1796126400: mosquitto version 2.0.11 running\nnot a line of Mosquitto's\n"), "b.log", brokerlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join("testdata", "witness", "negative.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	res := checkLogWith(t, string(log), Options{Broker: []*BrokerLog{blog}})
	if !slices.ContainsFunc(res.Summary.Notes, func(n string) bool {
		return strings.HasPrefix(n, "broker-log: b.log: 1 line of 2 not read (the first: line 2")
	}) {
		t.Errorf("notes %q: want the rejected broker log line counted", res.Summary.Notes)
	}
}

// TestWitnessUnrelatedLog: a broker log that shares no connect with the
// audit (another run's) is not judged: the witness rules skip, saying so,
// rather than pass.
func TestWitnessUnrelatedLog(t *testing.T) {
	dir := filepath.Join("..", "testdata", "realclients")
	blog := brokerLogFile(t, filepath.Join(dir, "paho-py-manual", "broker.log"))
	res := checkFilesWith(t, t.TempDir(), Options{Broker: []*BrokerLog{blog}}, filepath.Join(dir, "paho-go", "clients.ndjson"))
	for _, id := range []string{unauditedConnectID, unseenConnectID, sessionTakeoverID} {
		if !slices.ContainsFunc(res.Summary.Skipped, func(s Skip) bool {
			return s.Rule == id && strings.Contains(s.Reason, "shares no connect with the audit")
		}) {
			t.Errorf("%s: not skipped; skipped %v", id, res.Summary.Skipped)
		}
	}
	// its own broker's log is judged
	if res := checkWitness(t, "positive"); slices.ContainsFunc(res.Summary.Skipped, func(s Skip) bool { return s.Rule == unauditedConnectID }) {
		t.Errorf("a related log skipped: %v", res.Summary.Skipped)
	}
}

// TestStoredBrokerLogChanged: a broker log stored with a dataset and
// changed after ingest is not read as a witness, and the check says so
// once, naming it.
func TestStoredBrokerLogChanged(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "log.ndjson")
	if err := os.WriteFile(in, []byte(evidenceLog(10, func(*strings.Builder, string, func(string, float64, int, float64)) {})), 0o644); err != nil {
		t.Fatal(err)
	}
	blog := []byte("1796126400: mosquitto version 2.0.11 running\n1796126400: New client connected from 127.0.0.1:1 as dev-01 (p2, c0, k30).\n")
	ds := filepath.Join(dir, "ds")
	m, err := ingest.Run(context.Background(), ds, []ingest.Source{{Name: in}}, ingest.Options{BrokerLogs: []ingest.BrokerSource{{Name: "m.log", Data: blog}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(ds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Fleet.Witness == nil {
		t.Fatal("the stored broker log was not read")
	}
	f, _ := os.OpenFile(filepath.Join(ds, filepath.FromSlash(m.BrokerLogs[0].File)), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("1796126401: New client connected from 127.0.0.1:2 as dev-02 (p2, c0, k30).\n")
	f.Close()
	res, err = Check(ds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, note := range res.Summary.Notes {
		if strings.Contains(note, "m.log, stored as "+m.BrokerLogs[0].File+", was changed after ingest") {
			n++
		}
	}
	if res.Summary.Fleet.Witness != nil || n != 1 {
		t.Errorf("witness %v, notes %q; want no witness and one note naming the changed log", res.Summary.Fleet.Witness != nil, res.Summary.Notes)
	}
	// a broker log given replaces the stored one, and says so
	given, err := LoadBrokerLog(bytes.NewReader(blog), "given.log", brokerlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = Check(ds, Options{Broker: []*BrokerLog{given}})
	if err != nil {
		t.Fatal(err)
	}
	said := slices.ContainsFunc(res.Summary.Notes, func(n string) bool {
		return strings.Contains(n, "the broker log given (--broker-log) replaces the one stored with the dataset, m.log (stored as "+m.BrokerLogs[0].File+")")
	})
	if res.Summary.Fleet.Witness == nil || !said {
		t.Errorf("witness %v, notes %q; want the given log read and the stored one said to be replaced", res.Summary.Fleet.Witness != nil, res.Summary.Notes)
	}
}

// TestUnlistedFileNoted: a file in a dataset's directory that its
// manifest does not list (a stray part file, which verify refuses and any
// *.parquet glob reads) is not read by check, which says so once, naming
// it (issue 35, item 6).
func TestUnlistedFileNoted(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "log.ndjson")
	if err := os.WriteFile(in, []byte(evidenceLog(10, func(*strings.Builder, string, func(string, float64, int, float64)) {})), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(dir, "ds")
	m, err := ingest.Run(context.Background(), ds, []ingest.Source{{Name: in}}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clean, err := Check(ds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(ds, m.Files[0].Name))
	os.WriteFile(filepath.Join(ds, "part-99999.parquet"), b, 0o644)
	res, err := Check(ds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, note := range res.Summary.Notes {
		if strings.Contains(note, "part-99999.parquet is not part of the dataset") {
			said = append(said, note)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "verify refuses the dataset") || res.Summary.Records != clean.Summary.Records {
		t.Errorf("notes %q, records %d (clean %d): want one note naming the stray file, and it unread", res.Summary.Notes, res.Summary.Records, clean.Summary.Records)
	}
}

// TestBrokerLogAnHourOff: the same fleet's Mosquitto log with local stamps
// an hour off (read as UTC) pairs nothing; it is said to lie apart by a
// whole hour, a time zone, and neither the witness rules nor the
// incidents' broker view read it.
func TestBrokerLogAnHourOff(t *testing.T) {
	data, err := os.ReadFile("testdata/witness/positive-broker.log")
	if err != nil {
		t.Fatal(err)
	}
	var shifted bytes.Buffer
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if stamp, rest, ok := strings.Cut(line, ": "); ok {
			var n int64
			if _, err := fmt.Sscan(stamp, &n); err == nil {
				line = fmt.Sprintf("%d: %s", n+3600, rest)
			}
		}
		shifted.WriteString(line)
	}
	blog, err := LoadBrokerLog(&shifted, "shifted.log", brokerlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := sameResult(t, bucketed(t, 0, "testdata/witness/positive.ndjson"), Options{Broker: []*BrokerLog{blog}})
	w := res.Summary.Fleet.Witness
	if w == nil || !w.apart() || time.Duration(w.Apart).Round(time.Minute) != -time.Hour {
		t.Fatalf("witness %+v, want one apart by an hour", w)
	}
	for _, id := range []string{unauditedConnectID, unseenConnectID, sessionTakeoverID} {
		i := slices.IndexFunc(res.Summary.Skipped, func(s Skip) bool { return s.Rule == id })
		if i < 0 || !strings.Contains(res.Summary.Skipped[i].Reason, "a whole 1h0m0s: a time zone?") {
			t.Errorf("%s: skipped %+v, want it skipped naming the time zone", id, res.Summary.Skipped)
		}
	}
	for _, in := range res.Summary.Fleet.Incidents {
		if in.Broker != nil {
			t.Errorf("an incident's broker view from a log an hour off: %+v", in.Broker)
		}
	}
	if len(res.Summary.Fleet.ClockOffsets) != 0 {
		t.Errorf("clock offsets %+v from a log an hour off", res.Summary.Fleet.ClockOffsets)
	}
}

// TestFleetListsItsDevices: a check lists a small fleet's devices, sorted,
// so that a JUnit report needs no second read of the dataset (issue 36:
// the JUnit writer reopened it).
func TestFleetListsItsDevices(t *testing.T) {
	res := checkLogWith(t, evidenceLog(10, func(*strings.Builder, string, func(string, float64, int, float64)) {}), Options{})
	st := res.Summary.Fleet
	if len(st.IDs) != st.Devices || !slices.IsSorted(st.IDs) || st.Devices == 0 {
		t.Errorf("%d devices, ids %q", st.Devices, st.IDs)
	}
	fc := newFleetCounter(0)
	for i := range MaxIDs + 1 {
		fc.add(&Device{ID: fmt.Sprintf("d%05d", i)})
	}
	if fc.St.IDs != nil {
		t.Errorf("%d devices listed beyond MaxIDs", len(fc.St.IDs))
	}
}
