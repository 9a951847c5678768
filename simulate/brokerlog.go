package simulate

import (
	"math"
	"strconv"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// The broker's log a run writes beside its records (Config.BrokerLog):
// Mosquitto 2.0's lines with log_type all, stamped as Mosquitto stamps
// them (epoch seconds): each accept of a device, with the Last Will it
// declares ("offline", retained, on status/ID) and its own retained
// "online" there, and the broker's return after the drop and after each
// flap. The broker dies at the drop and at each flap's end with no line
// (a SIGKILL, as in the corpus), so no will goes out: every device is
// shown online until it comes back (docs/rules.md, "presence"). Every
// device connected before the drop was accepted a second before it.

// brokerVersion is the Mosquitto the lines are written as.
const brokerVersion = "2.0.11"

// brokerLine appends Mosquitto's line msg, stamped at µs t from the drop.
func (n *names) brokerLine(dst []byte, t int64, msg ...string) []byte {
	sec := (n.startNs + t*1000) / 1e9
	if n.startNs+t*1000 < 0 && (n.startNs+t*1000)%1e9 != 0 {
		sec--
	}
	dst = strconv.AppendInt(dst, sec, 10)
	dst = append(dst, ": "...)
	for _, m := range msg {
		dst = append(dst, m...)
	}
	return append(dst, '\n')
}

// brokerAccepts appends the lines of the broker's accepts among recs.
func (n *names) brokerAccepts(dst []byte, recs []rec, keepalive string) []byte {
	var client []byte
	for i := range recs {
		x := &recs[i]
		if x.outcome != auditfmt.Connected || x.stage != 0 {
			continue
		}
		client = appendID(client[:0], DefaultDevicePfx, int(x.dev)+1, n.devWidth)
		dst = n.accept(dst, x.t, string(client), int(x.dev), x.presence, keepalive)
	}
	return dst
}

// accept appends the lines of one accept of id (device dev) at t:
// Mosquitto's connect, the will and its topic, the CONNACK and the
// device's own "online".
func (n *names) accept(dst []byte, t int64, id string, dev int, present bool, keepalive string) []byte {
	addr := "10." + strconv.Itoa(dev>>16&255) + "." + strconv.Itoa(dev>>8&255) + "." + strconv.Itoa(dev&255) + ":" +
		strconv.Itoa(40000+int(t/1000)%20000)
	clean, sp := "c0", "1"
	if n.clean {
		clean = "c1"
	}
	if !present {
		sp = "0"
	}
	dst = n.brokerLine(dst, t, "New connection from ", addr, " on port 1883.")
	dst = n.brokerLine(dst, t, "New client connected from ", addr, " as ", id, " (p2, ", clean, ", k", keepalive, ").")
	dst = n.brokerLine(dst, t, "Will message specified (7 bytes) (r1, q1).")
	dst = n.brokerLine(dst, t, "\tstatus/", id)
	dst = n.brokerLine(dst, t, "Sending CONNACK to ", id, " (", sp, ", 0)")
	return n.brokerLine(dst, t, "Received PUBLISH from ", id, " (d0, q1, r1, m1, 'status/", id, "', ... (6 bytes))")
}

// brokerUp appends the broker's start, at t.
func (n *names) brokerUp(dst []byte, t int64) []byte {
	dst = n.brokerLine(dst, t, "mosquitto version ", brokerVersion, " starting")
	return n.brokerLine(dst, t, "mosquitto version ", brokerVersion, " running")
}

// brokerLogger writes the broker's log of a run (Config.BrokerLog).
type brokerLogger struct {
	cfg       *Config
	n         *names
	keepalive string  // the keepalive the devices declare, s
	ups       []int64 // the broker's returns still to write, µs from the drop
	buf       []byte
}

// newBrokerLogger returns the logger of cfg's broker log, nil without one.
func newBrokerLogger(cfg *Config, n *names) *brokerLogger {
	if cfg.BrokerLog == nil {
		return nil
	}
	k := int(math.Round(cfg.Policy.KeepaliveS))
	if k <= 0 {
		k = 60 // paho's default, and Mosquitto's usual
	}
	return &brokerLogger{cfg: cfg, n: n, keepalive: strconv.Itoa(k)}
}

// begin writes the broker's start and, unless the fleet boots cold, the
// accept of every device a second before the drop; it notes the returns
// of the fleet f's broker to come.
func (b *brokerLogger) begin(f *fleet) error {
	if b == nil {
		return nil
	}
	for i := 1; i < len(f.down); i += 2 {
		if f.down[i] <= f.horizon {
			b.ups = append(b.ups, f.down[i])
		}
	}
	b.buf = b.n.brokerUp(b.buf[:0], -2*microsPerSecond)
	var client []byte
	for dev := range b.cfg.Devices {
		if b.cfg.ColdBoot {
			break
		}
		client = appendID(client[:0], DefaultDevicePfx, dev+1, b.n.devWidth)
		b.buf = b.n.accept(b.buf, -microsPerSecond, string(client), dev, false, b.keepalive)
		if len(b.buf) > 1<<20 {
			if err := b.flush(); err != nil {
				return err
			}
		}
	}
	return b.flush()
}

// write writes the returns of the broker up to t, then lines: those of
// a batch whose last record is at t (an accept comes after the return it
// follows, and a batch that spans a return has its accepts after it; the
// reader sorts the lines by their stamps in any case).
func (b *brokerLogger) write(t int64, lines []byte) error {
	for len(b.ups) > 0 && b.ups[0] <= t {
		b.buf = b.n.brokerUp(b.buf, b.ups[0])
		b.ups = b.ups[1:]
	}
	b.buf = append(b.buf, lines...)
	return b.flush()
}

func (b *brokerLogger) flush() error {
	_, err := b.cfg.BrokerLog.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}
