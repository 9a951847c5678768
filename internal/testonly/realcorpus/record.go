package realcorpus

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Tools are the programs a recording runs.
type Tools struct {
	Mosquitto string // the broker, /usr/sbin/mosquitto by default
	Python    string // a Python with paho-mqtt 1.x, /usr/bin/python3 by default
	FleetPy   string // fleet.py of this package
}

// DefaultTools returns the Debian paths, with fleet.py found from the
// module root or this package's directory.
func DefaultTools() Tools {
	t := Tools{Mosquitto: "/usr/sbin/mosquitto", Python: "/usr/bin/python3"}
	for _, p := range []string{filepath.Join("internal", "testonly", "realcorpus", "fleet.py"), "fleet.py"} {
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				t.FleetPy = abs
				break
			}
		}
	}
	return t
}

// Record records scenario sc into dir (emptied first): see the package
// documentation.
func Record(sc Scenario, dir string, tools Tools) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	blog, err := os.Create(filepath.Join(dir, BrokerLog))
	if err != nil {
		return err
	}
	defer blog.Close()
	log := NewStampedLog(blog)
	confOf := MosquittoConf
	if sc.Presence {
		db := ""
		if sc.Persistence {
			if db, err = os.MkdirTemp("", "corpus-db-"); err != nil {
				return err
			}
			defer os.RemoveAll(db)
			if err := os.Chmod(db, 0o777); err != nil { // mosquitto run as root writes as the user mosquitto
				return err
			}
		}
		confOf = func(port int) string { return MosquittoConfAll(port, db) }
	}
	b, port, conf, err := startOnFreePort(tools.Mosquitto, log, confOf)
	if err != nil {
		return err
	}
	defer os.Remove(conf) // the restart reads it again
	fleetPort := port
	var px *Proxy
	if sc.proxied() {
		if px, err = StartProxy("127.0.0.1:0", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
			b.Kill()
			return err
		}
		defer px.Close()
		fleetPort = px.Port()
	}
	time.Sleep(300 * time.Millisecond)
	broker := fmt.Sprintf("tcp://127.0.0.1:%d", port)
	var app *App
	if sc.ServiceDown > 0 {
		if app, err = StartApp(broker); err != nil {
			b.Kill()
			return err
		}
	}
	offsets := filepath.Join(dir, ".clock-offsets.json")
	stop, kill, err := startFleet(sc, tools, fleetPort, filepath.Join(dir, ClientLog), offsets)
	if err != nil {
		b.Kill()
		return err
	}
	if sc.CommandTTL > 0 {
		ids := make([]string, sc.Devices)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-%04d", sc.Prefix, i+1)
		}
		cm, err := StartCommander(broker, ids, time.Second, sc.CommandTTL)
		if err != nil {
			kill()
			b.Kill()
			return err
		}
		defer cm.Stop()
	}
	time.Sleep(sc.Boot + sc.Settle)
	if sc.Awaited {
		awaitLog(blog.Name(), 4*(sc.Boot+sc.Settle)+30*time.Second, func(t *Truth) bool { return len(t.conn) >= sc.Devices })
	}
	for _, o := range sc.Outages {
		time.Sleep(o.Before)
		switch o.Kind {
		case Kill:
			log.Mark(KillMark)
			b.Kill()
			if app != nil {
				app.Stop() // it died with the broker
			}
			time.Sleep(o.Down)
			log.Mark(RestartMark)
			if b, err = StartBroker(tools.Mosquitto, conf, log); err != nil {
				stop()
				return err
			}
			if app != nil {
				time.Sleep(sc.ServiceDown)
				log.Mark(AppMark)
				if app, err = StartApp(broker); err != nil {
					stop()
					b.Kill()
					return err
				}
			}
		case Freeze:
			log.Mark(FreezeMark)
			px.Freeze()
			time.Sleep(o.Down)
			log.Mark(RestoreMark)
			px.Restore()
		case Refuse:
			log.Mark(RefuseMark)
			px.Refuse()
			time.Sleep(o.Down)
			log.Mark(ServeMark)
			px.Serve()
		default:
			stop()
			b.Kill()
			return fmt.Errorf("%s: unknown outage kind %q", sc.Name, o.Kind)
		}
	}
	time.Sleep(sc.After)
	if sc.Awaited {
		awaitLog(blog.Name(), 3*sc.After+30*time.Second, func(t *Truth) bool {
			o := t.current()
			t.settle(time.Now())
			return o != nil && len(o.Reconnected) == len(o.Lost)
		})
		time.Sleep(2 * time.Second) // for the devices' last records
	}
	log.Mark(StopMark)
	if app != nil {
		defer app.Stop()
	}
	if sc.Cut {
		kill()
	} else {
		stop()
	}
	time.Sleep(time.Second)
	b.Stop()
	var clock map[string]float64
	if raw, err := os.ReadFile(offsets); err == nil {
		if err := json.Unmarshal(raw, &clock); err != nil {
			return fmt.Errorf("%s: %w", offsets, err)
		}
		os.Remove(offsets)
	}
	return writeMeta(sc, dir, tools, clock)
}

// awaitLog reads the broker's log at path, as far as it is written, every
// 200 ms until it shows what done asks for, or for at most limit (then the
// recording goes on, and its judge says what is missing).
func awaitLog(path string, limit time.Duration, done func(*Truth) bool) {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		t, _, err := readTruth(f)
		f.Close()
		if err == nil && done(t) {
			return
		}
	}
}

// startOnFreePort starts mosquitto on a port that was free a moment ago,
// with its configuration file conf; when another process took the port
// in that moment, on another (three tries).
func startOnFreePort(mosquitto string, log *StampedLog, confOf func(port int) string) (b *Broker, port int, conf string, err error) {
	for range 3 {
		if port, err = FreePort(); err != nil {
			return nil, 0, "", err
		}
		conf = filepath.Join(os.TempDir(), fmt.Sprintf("corpus-%d.conf", port))
		if err = os.WriteFile(conf, []byte(confOf(port)), 0o644); err != nil {
			return nil, 0, "", err
		}
		if b, err = StartBroker(mosquitto, conf, log); err == nil {
			return b, port, conf, nil
		}
		os.Remove(conf)
		if !strings.Contains(err.Error(), "in use") {
			break
		}
	}
	return nil, 0, "", err
}

// startFleet starts sc's clients; the first function it returns stops
// them and waits until they have written their last records, the second
// kills them (a Python fleet only: a Go fleet stops). A fleet with
// skewed clocks writes the offsets it drew to the file offsets.
func startFleet(sc Scenario, tools Tools, port int, audit, offsets string) (stop, kill func(), err error) {
	if sc.Client == GoPaho {
		if sc.Skew.Fraction > 0 || sc.Cut {
			return nil, nil, fmt.Errorf("%s: the Go fleet has no clock skew and cannot be cut", sc.Name)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- RunGoFleet(ctx, sc, fmt.Sprintf("tcp://127.0.0.1:%d", port), audit) }()
		stop := func() {
			cancel()
			if err := <-done; err != nil {
				fmt.Fprintln(os.Stderr, "realcorpus: go fleet:", err)
			}
		}
		return stop, stop, nil
	}
	if tools.FleetPy == "" {
		return nil, nil, fmt.Errorf("fleet.py not found")
	}
	args := []string{tools.FleetPy, "--port", fmt.Sprint(port), "--devices", fmt.Sprint(sc.Devices), "--prefix", sc.Prefix,
		"--mode", sc.Mode, "--audit", audit, "--base", fmt.Sprint(sc.Policy.BaseDelayS), "--cap", fmt.Sprint(sc.Policy.MaxDelayS),
		"--multiplier", fmt.Sprint(sc.Policy.Multiplier), "--keepalive", fmt.Sprint(sc.Keepalive),
		"--boot-spread", fmt.Sprint(sc.Boot.Seconds()), "--churn", fmt.Sprint(sc.Churn), "--seed", fmt.Sprint(sc.Seed)}
	if sc.ServiceDown > 0 {
		args = append(args, "--service")
	}
	if sc.Presence {
		args = append(args, "--presence")
	}
	if sc.Outbox > 0 {
		args = append(args, "--outbox", fmt.Sprint(sc.Outbox))
	}
	if sc.CommandTTL > 0 {
		args = append(args, "--commands")
	}
	if sc.Skew.Fraction > 0 {
		args = append(args, "--clock-skew", fmt.Sprintf("%g:%g", sc.Skew.Fraction, sc.Skew.Offset.Seconds()), "--clock-offsets", offsets)
		if sc.Skew.Step {
			args = append(args, "--clock-step")
		}
	}
	cmd := exec.Command(tools.Python, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}, func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}, nil
}

func writeMeta(sc Scenario, dir string, tools Tools, clock map[string]float64) error {
	m := Meta{Scenario: sc.Name, Description: sc.Description, Devices: sc.Devices, Client: sc.Client,
		Mode: sc.Mode, Churn: sc.Churn, KeepaliveS: sc.Keepalive, BootS: sc.Boot.Seconds(), Cut: sc.Cut, ClockStep: sc.Skew.Step, ServiceDownS: sc.ServiceDown.Seconds(), DownS: sc.Down().Seconds(), ClockOffsetsS: clock,
		Presence: sc.Presence, Persistence: sc.Persistence, Outbox: sc.Outbox, CommandTTLS: sc.CommandTTL.Seconds(),
		Recorded: time.Now().UTC().Format(time.RFC3339), Versions: versions(tools)}
	for _, o := range sc.Outages {
		m.Outages = append(m.Outages, MetaOutage{Kind: o.Kind, BeforeS: o.Before.Seconds(), DownS: o.Down.Seconds()})
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, MetaFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, PolicyFile), sc.Policy.AppendTOML(nil), 0o644)
}

// versions says what recorded the corpus.
func versions(tools Tools) map[string]string {
	v := map[string]string{"go": strings.TrimPrefix(runtime.Version(), "go"), "paho.mqtt.golang": GoPahoVersion}
	if out, _ := exec.Command(tools.Mosquitto, "-h").CombinedOutput(); len(out) > 0 {
		if line, _, _ := strings.Cut(string(out), "\n"); strings.HasPrefix(line, "mosquitto version") {
			v["mosquitto"] = strings.TrimPrefix(line, "mosquitto version ")
		}
	}
	if out, err := exec.Command(tools.Python, "-c", "import paho.mqtt, sys; print(paho.mqtt.__version__, sys.version.split()[0])").Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) == 2 {
			v["paho-mqtt (python)"], v["python"] = f[0], f[1]
		}
	}
	return v
}
