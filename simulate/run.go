package simulate

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"unsafe"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/internal/ordered"
)

// Run simulates the outage cfg describes and writes the fleet's audit
// records to w as NDJSON. It returns the run's figures, or the first
// error of the configuration or of w. Cancelling ctx stops the run.
func Run(ctx context.Context, cfg Config, w io.Writer) (Stats, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Stats{}, err
	}
	names := newNames(&cfg)
	batches := make(chan []rec, 4)
	encoded := make(chan *chunk, 4)
	// buffers go round: the model fills record batches, the encoders
	// fill byte buffers, and both come back once written
	reuse := make(chan []rec, 16)
	outs := make(chan []byte, 16)
	bl := newBrokerLogger(&cfg, names)
	go ordered.Run(runtime.GOMAXPROCS(0), chunks(batches, outs), encoded, func(_ int, c *chunk) {
		c.out = names.encode(c.out[:0], c.recs)
		if bl != nil {
			c.blog = names.brokerAccepts(c.blog[:0], c.recs, bl.keepalive)
		}
	})

	var st counter
	f := newFleet(&cfg, func(b []rec) { batches <- b }, reuse, &st)
	werr := bl.begin(f)
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan bool, 1)
	go func() {
		done <- f.run(stop.Done())
		close(batches)
	}()
	for c := range encoded {
		if werr == nil {
			if _, werr = w.Write(c.out); werr == nil && bl != nil && len(c.recs) > 0 {
				werr = bl.write(c.recs[len(c.recs)-1].t, c.blog)
			}
			if werr != nil {
				cancel()
			}
		}
		offer(reuse, c.recs)
		offer(outs, c.out)
	}
	finished := <-done
	if werr == nil && bl != nil {
		werr = bl.write(f.horizon, nil)
	}
	if werr != nil {
		return Stats{}, fmt.Errorf("simulate: write: %w", werr)
	}
	if !finished {
		return Stats{}, ctx.Err()
	}
	return st.stats(f), nil
}

// chunk is a batch of records and, once encoded, their NDJSON lines.
type chunk struct {
	recs []rec
	out  []byte
	blog []byte // the broker's lines of its accepts (Config.BrokerLog)
}

// chunks pairs each batch with a byte buffer, reused from outs if one is
// there.
func chunks(in <-chan []rec, outs <-chan []byte) <-chan *chunk {
	out := make(chan *chunk, cap(in))
	go func() {
		for b := range in {
			c := &chunk{recs: b}
			select {
			case c.out = <-outs:
			default:
				c.out = make([]byte, 0, len(b)*200)
			}
			out <- c
		}
		close(out)
	}()
	return out
}

// offer puts v in ch if there is room, for reuse.
func offer[T any](ch chan<- T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// names holds what the encoder needs besides the records. Client and host
// ids are a prefix and a number, zero-padded to the width of the largest
// (at least four digits), written as they are needed: looking them up in
// a table of a million strings would cost a cache miss per record.
type names struct {
	devWidth, hostWidth int
	perHost             int
	hosts               bool // whether host_id is written: several devices per host
	startNs             int64
	clean               bool
}

func newNames(cfg *Config) *names {
	return &names{devWidth: idWidth(cfg.Devices), hostWidth: idWidth(cfg.hosts()), perHost: cfg.DevicesPerHost,
		hosts: cfg.DevicesPerHost > 1, startNs: cfg.Start.UnixNano(), clean: cfg.Policy.CleanSession}
}

func idWidth(n int) int { return max(len(strconv.Itoa(n)), 4) }

// appendID appends prefix and k, zero-padded to width digits.
func appendID(dst []byte, prefix string, k, width int) []byte {
	var digits [20]byte
	i := len(digits)
	for ; k > 0 || i > len(digits)-width; k /= 10 {
		i--
		digits[i] = byte('0' + k%10)
	}
	return append(append(dst, prefix...), digits[i:]...)
}

// encode appends the records as NDJSON lines to dst.
func (n *names) encode(dst []byte, recs []rec) []byte {
	var r auditfmt.Record
	var client, host, try []byte
	for i := range recs {
		x := &recs[i]
		client = appendID(client[:0], DefaultDevicePfx, int(x.dev)+1, n.devWidth)
		r = auditfmt.Record{ClientID: unsafe.String(&client[0], len(client)), RecordedAt: n.startNs + x.t*1000,
			BackoffDelayS: x.delay, Attempt: int64(x.attempt), Outcome: x.outcome, CleanSession: n.clean,
			FailureClass: x.fail, Stage: x.stage, DeviceSeq: int64(x.seq), Has: auditfmt.HasDeviceSeq}
		if n.hosts {
			host = appendID(host[:0], DefaultHostPfx, int(x.dev)/n.perHost+1, n.hostWidth)
			r.HostID = unsafe.String(&host[0], len(host))
		}
		if x.ceiling >= 0 {
			r.CeilingS, r.Has = x.ceiling, r.Has|auditfmt.HasCeiling
		}
		if x.reason != 0 {
			r.ReasonCode, r.Has = int64(x.reason), r.Has|auditfmt.HasReasonCode
		}
		if x.try > 0 {
			try = strconv.AppendInt(append(append(try[:0], client...), "-a"...), int64(x.try), 10)
			r.AttemptID = unsafe.String(&try[0], len(try))
		}
		switch {
		case x.commands:
			r.InboundRedelivered, r.Has = x.depth, r.Has|auditfmt.HasInboundRedelivered
			if x.flushed >= 0 {
				r.InboundExpired, r.Has = x.flushed, r.Has|auditfmt.HasInboundExpired
			}
		case x.depth >= 0:
			r.OutboxDepth, r.OutboxFlushed, r.Has = x.depth, x.flushed, r.Has|auditfmt.HasOutboxDepth|auditfmt.HasOutboxFlushed
		}
		if x.dropped >= 0 {
			r.OutboxDropped, r.Has = x.dropped, r.Has|auditfmt.HasOutboxDropped
		}

		if x.outcome == auditfmt.Connected && x.stage == 0 {
			r.SessionPresent, r.Has = x.presence, r.Has|auditfmt.HasSessionPresent
		}
		// r's ids alias client and host, which stay unchanged until
		// AppendJSON has copied them.
		dst = append(r.AppendJSON(dst), '\n')
	}
	return dst
}
