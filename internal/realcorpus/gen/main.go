// Command gen records stormaudit's real-client corpus: fleets of real MQTT
// clients (Python paho-mqtt 1.6, Go paho.mqtt.golang) against a real
// Mosquitto that is killed with SIGKILL and restarted, each fleet's audit
// log kept beside the broker's own log as ground truth. See
// docs/corpus.md.
//
//	go run ./internal/realcorpus/gen -out testdata/realclients
//
// It needs Debian's mosquitto and python3-paho-mqtt. A run takes about two
// minutes per scenario.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/stormaudit/stormaudit/internal/realcorpus"
)

func main() {
	out := flag.String("out", "testdata/realclients", "corpus directory")
	only := flag.String("only", "", "record only this scenario")
	mosq := flag.String("mosquitto", "/usr/sbin/mosquitto", "the broker")
	py := flag.String("python", "/usr/bin/python3", "a Python with paho-mqtt 1.x")
	flag.Parse()
	fleetPy, err := filepath.Abs(filepath.Join("internal", "realcorpus", "fleet.py"))
	if err != nil {
		fail(err)
	}
	for _, sc := range realcorpus.Scenarios {
		if *only != "" && sc.Name != *only {
			continue
		}
		r := &recorder{sc: sc, dir: filepath.Join(*out, sc.Name), mosquitto: *mosq, python: *py, fleetPy: fleetPy}
		fmt.Fprintf(os.Stderr, "gen: %s: %d devices, broker down %s\n", sc.Name, sc.Devices, sc.Down)
		if err := r.run(); err != nil {
			fail(fmt.Errorf("%s: %w", sc.Name, err))
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// recorder records one scenario.
type recorder struct {
	sc                         realcorpus.Scenario
	dir                        string
	mosquitto, python, fleetPy string
	log                        *realcorpus.StampedLog
}

func (r *recorder) run() error {
	if err := os.RemoveAll(r.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	port, err := realcorpus.FreePort()
	if err != nil {
		return err
	}
	blog, err := os.Create(filepath.Join(r.dir, realcorpus.BrokerLog))
	if err != nil {
		return err
	}
	defer blog.Close()
	r.log = realcorpus.NewStampedLog(blog)
	conf := filepath.Join(os.TempDir(), fmt.Sprintf("corpus-%d.conf", port))
	if err := os.WriteFile(conf, []byte(realcorpus.MosquittoConf(port)), 0o644); err != nil {
		return err
	}
	defer os.Remove(conf)

	b, err := realcorpus.StartBroker(r.mosquitto, conf, r.log)
	if err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)
	audit := filepath.Join(r.dir, realcorpus.ClientLog)
	stop, err := r.startFleet(port, audit)
	if err != nil {
		b.Kill()
		return err
	}
	time.Sleep(r.sc.Boot + r.sc.Settle)
	r.log.Mark(realcorpus.KillMark)
	b.Kill()
	time.Sleep(r.sc.Down)
	r.log.Mark(realcorpus.RestartMark)
	if b, err = realcorpus.StartBroker(r.mosquitto, conf, r.log); err != nil {
		stop()
		return err
	}
	time.Sleep(r.sc.After)
	r.log.Mark(realcorpus.StopMark)
	stop()
	time.Sleep(time.Second)
	b.Stop()
	return r.writeMeta()
}

// startFleet starts the scenario's clients; the function it returns
// stops them and waits until they have written their last records.
func (r *recorder) startFleet(port int, audit string) (func(), error) {
	sc := r.sc
	if sc.Client == realcorpus.GoPaho {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- realcorpus.RunGoFleet(ctx, sc, fmt.Sprintf("tcp://127.0.0.1:%d", port), audit) }()
		return func() {
			cancel()
			if err := <-done; err != nil {
				fmt.Fprintln(os.Stderr, "gen: go fleet:", err)
			}
		}, nil
	}
	args := []string{r.fleetPy, "--port", fmt.Sprint(port), "--devices", fmt.Sprint(sc.Devices), "--prefix", sc.Prefix,
		"--mode", sc.Mode, "--audit", audit, "--base", fmt.Sprint(sc.Policy.BaseDelayS), "--cap", fmt.Sprint(sc.Policy.MaxDelayS),
		"--multiplier", fmt.Sprint(sc.Policy.Multiplier), "--keepalive", fmt.Sprint(sc.Keepalive),
		"--boot-spread", fmt.Sprint(sc.Boot.Seconds()), "--churn", fmt.Sprint(sc.Churn), "--seed", fmt.Sprint(sc.Seed)}
	cmd := exec.Command(r.python, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}, nil
}

func (r *recorder) writeMeta() error {
	m := realcorpus.Meta{Scenario: r.sc.Name, Description: r.sc.Description, Devices: r.sc.Devices, Client: r.sc.Client,
		Mode: r.sc.Mode, Churn: r.sc.Churn, DownS: r.sc.Down.Seconds(), Recorded: time.Now().UTC().Format(time.RFC3339),
		Versions: versions(r.mosquitto, r.python)}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.dir, realcorpus.MetaFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.dir, realcorpus.PolicyFile), r.sc.Policy.AppendTOML(nil), 0o644)
}

// versions says what recorded the corpus.
func versions(mosq, py string) map[string]string {
	v := map[string]string{"go": strings.TrimPrefix(runtime.Version(), "go"), "paho.mqtt.golang": realcorpus.GoPahoVersion}
	if out, err := exec.Command(mosq, "-h").CombinedOutput(); err == nil || len(out) > 0 {
		if line, _, _ := strings.Cut(string(out), "\n"); strings.HasPrefix(line, "mosquitto version") {
			v["mosquitto"] = strings.TrimPrefix(line, "mosquitto version ")
		}
	}
	if out, err := exec.Command(py, "-c", "import paho.mqtt, sys; print(paho.mqtt.__version__, sys.version.split()[0])").Output(); err == nil {
		f := strings.Fields(string(out))
		if len(f) == 2 {
			v["paho-mqtt (python)"], v["python"] = f[0], f[1]
		}
	}
	return v
}
