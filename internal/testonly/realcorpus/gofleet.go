package realcorpus

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

// auditWriter appends audit records as JSON lines from many goroutines.
type auditWriter struct {
	mu sync.Mutex
	f  *os.File
}

// write appends one record. The time is taken before the lock, as a
// logging call does.
func (w *auditWriter) write(rec map[string]any) {
	rec["recorded_at"] = time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00")
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err) // only numbers, strings and booleans
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.f.Write(append(b, '\n'))
}

// RunGoFleet runs sc's devices as paho.mqtt.golang clients against broker
// (tcp://host:port), each driven by the reference manager alone
// (AutoReconnect off), which writes its audit records to the file audit.
// It returns when ctx is done and every device has written "stopped".
func RunGoFleet(ctx context.Context, sc Scenario, broker, audit string) error {
	f, err := os.OpenFile(audit, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	w := &auditWriter{f: f}
	master := rand.New(rand.NewPCG(uint64(sc.Seed), 0))
	var wg sync.WaitGroup
	gap := sc.Boot / time.Duration(max(1, sc.Devices))
	for i := range sc.Devices {
		d := &goDevice{id: fmt.Sprintf("%s-%04d", sc.Prefix, i+1), sc: sc, w: w,
			rng: rand.New(rand.NewPCG(master.Uint64(), master.Uint64())), lost: make(chan struct{}, 1)}
		opts := mqtt.NewClientOptions().AddBroker(broker).SetClientID(d.id).SetCleanSession(false).
			SetKeepAlive(time.Duration(sc.Keepalive) * time.Second).SetAutoReconnect(false).SetConnectRetry(false).
			SetConnectTimeout(5 * time.Second).SetConnectionLostHandler(func(mqtt.Client, error) {
			select {
			case d.lost <- struct{}{}:
			default:
			}
		})
		d.c = mqtt.NewClient(opts)
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.run(ctx)
		}()
		select {
		case <-ctx.Done():
		case <-time.After(gap):
		}
	}
	wg.Wait()
	return nil
}

// goDevice is one Go client and its manager.
type goDevice struct {
	id      string
	sc      Scenario
	w       *auditWriter
	rng     *rand.Rand
	c       mqtt.Client
	lost    chan struct{}
	attempt int
}

func (d *goDevice) rec(outcome string, delay float64, extra ...any) {
	r := map[string]any{"client_id": d.id, "attempt": d.attempt, "backoff_delay_s": roundMicro(delay),
		"outcome": outcome, "clean_session": false}
	for i := 0; i+1 < len(extra); i += 2 {
		r[extra[i].(string)] = extra[i+1]
	}
	d.w.write(r)
}

func roundMicro(s float64) float64 { return float64(int64(s*1e6+0.5)) / 1e6 }

func (d *goDevice) run(ctx context.Context) {
	for d.backoff(ctx) {
		select {
		case <-d.lost:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	d.rec("stopped", 0)
	d.c.Disconnect(100)
}

// backoff retries until connected (true) or ctx is done (false).
func (d *goDevice) backoff(ctx context.Context) bool {
	p := d.sc.Policy
	d.attempt = 0
	for {
		ceil := p.Ceiling(int64(d.attempt))
		delay := d.rng.Float64() * ceil
		d.rec("backoff_wait", delay, "ceiling_s", ceil)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Duration(roundMicro(delay) * 1e9)):
		}
		tok := d.c.Connect()
		if tok.WaitTimeout(6*time.Second) && tok.Error() == nil {
			d.attempt = 0
			d.rec("connected", 0, "session_present", tok.(*mqtt.ConnectToken).SessionPresent())
			return true
		}
		d.attempt++
		d.rec("attempt_failed", delay, "failure_class", "transient")
	}
}
