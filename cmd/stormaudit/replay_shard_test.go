package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/internal/testonly/realcorpus"
	"github.com/stormaudit/stormaudit/replay"
)

// TestReplayShardsAgainstMosquitto: three stormaudit processes replay
// their shards of one plan from one start against one Mosquitto, and
// --merge makes one report of theirs that agrees with one process
// replaying the whole plan: the same devices, connects scheduled and
// accepted, devices recovered, busiest seconds and result.
func TestReplayShardsAgainstMosquitto(t *testing.T) {
	const mosquitto = "/usr/sbin/mosquitto"
	if _, err := exec.LookPath(mosquitto); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs Debian's mosquitto")
		}
		t.Skip("needs", mosquitto)
	}
	dir := t.TempDir()
	port, err := realcorpus.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(conf, []byte(realcorpus.MosquittoConf(port)), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	b, err := realcorpus.StartBroker(mosquitto, conf, realcorpus.NewStampedLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	broker := fmt.Sprintf("mqtt://127.0.0.1:%d", port)
	fleet := filepath.Join(dir, "fleet.ndjson")
	if code, _, stderr := runArgs(t, "simulate", "-q", "--devices", "300", "--outage", "5s", "--horizon", "30s", "-o", fleet); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	judge := []string{"--connack-slo", "1m", "--max-lateness", "1m", "--format", "json"} // a loaded machine must not decide it
	code, out, stderr := runArgs(t, append([]string{"replay", "-q", "--speed", "5", "--broker", broker, fleet}, judge...)...)
	if code != 0 {
		t.Fatalf("the whole plan: exit %d: %s\n%s", code, stderr, out)
	}
	whole := readReplayJSON(t, out)

	start := time.Now().Add(10 * time.Second).UTC().Format(time.RFC3339Nano) // room for three processes to read the fleet on a loaded machine
	var shards []*exec.Cmd
	var files []string
	for i := range 3 {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		files = append(files, f)
		c := stormauditBinary(t, dir, append([]string{"replay", "-q", "--speed", "5", "--broker", broker, "--shard", fmt.Sprintf("%d/3", i), "--start-at", start, fleet}, judge...)...)
		w, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		c.Stdout, c.Stderr = w, os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, c)
	}
	for i, c := range shards {
		if err := c.Wait(); err != nil {
			t.Fatalf("shard %d/3: %v", i, err)
		}
	}
	code, out, stderr = runArgs(t, append(append([]string{"replay", "--merge"}, files...), judge...)...)
	if code != 0 {
		t.Fatalf("--merge: exit %d: %s\n%s", code, stderr, out)
	}
	merged := readReplayJSON(t, out)
	// a shard's report that says it was interrupted is refused, by its file
	shard1, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.json")
	if err := os.WriteFile(edited, bytes.Replace(shard1, []byte(`"interrupted": false`), []byte(`"interrupted": true`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runArgs(t, "replay", "--merge", files[0], edited, files[2]); code != 2 || !strings.Contains(stderr, "edited.json: shard 1/3 was interrupted") {
		t.Errorf("--merge with an interrupted shard: exit %d: %s", code, stderr)
	}
	figures := func(r *replay.Report) string {
		return fmt.Sprintf("devices %d, scheduled %d, accepted %d, recovered %d, busiest seconds %d, %s",
			r.Devices, r.ConnectsScheduled, r.ConnectsAccepted, r.Recovered, r.BusiestSeconds, r.Verdict)
	}
	if figures(merged) != figures(whole) || merged.Shards != 3 || whole.ConnectsAccepted != whole.ConnectsScheduled {
		t.Errorf("merged shards: %s (%d shards)\nthe whole:     %s", figures(merged), merged.Shards, figures(whole))
	}
}

// readReplayJSON reads one replay report.
func readReplayJSON(t *testing.T, out []byte) *replay.Report {
	t.Helper()
	reps, err := replay.ReadJSON(bytes.NewReader(out))
	if err != nil || len(reps) != 1 {
		t.Fatalf("%v: %d reports in %s", err, len(reps), out)
	}
	return reps[0]
}
