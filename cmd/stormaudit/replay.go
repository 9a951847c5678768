package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/stormaudit/stormaudit/internal/sidefile"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/replay"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"
)

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "replay a recorded connect schedule, or a what-if, against a real MQTT broker",
		ArgsUsage: "INPUT...",
		Description: `Plays the fleet's recorded socket-opens (INPUT read as check reads it: a
dataset, or audit logs) against an MQTT broker, each device's connects at
their recorded offsets from the incident's start (--from to choose), with
real MQTT connections: CONNECT with the device's client id, clean_session and
keepalive, a retained "offline" Last Will and "online" status on
stormaudit/replay/CLIENT_ID/status, a DISCONNECT at the end. --policy redraws
the same devices' schedule from the same incident under another policy
(simulate's model); --compare replays both, one after the other.

--queued N gives every device a persistent session that a publisher fills
with N messages while the device is away, and measures their redelivery on
its return: received per second, DUP-flagged, duplicates, lost, drain time
(--link-down incident, the default with --queued when there is an incident
and no --broker-restart, fails the devices' connects during the incident
while the broker stays up and queues; --link-down none replays without).

The broker is embedded (mochi-mqtt, on a free loopback port) unless --broker
mqtt://HOST:PORT or mqtts://HOST:PORT names one; credentials come from
STORMAUDIT_MQTT_USERNAME and STORMAUDIT_MQTT_PASSWORD or --credentials FILE
(a username line and a password line), never the command line.
docs/replay.md describes the mapping from records to connects.

Before the first connect it checks what the replay needs of this machine
(descriptors: one a device, two with the embedded broker; local ports;
memory) and refuses a plan that cannot be driven, saying the --devices that
fits. The report keeps what the broker did apart from what the replay did:
a replay whose own lateness (p99, overall and in the plan's busiest seconds)
exceeds --max-lateness, or whose connects failed on this machine, says
nothing of the broker, and its result is inconclusive.

Exit status: 0 the broker held; 1 it did not (a refusal, a timeout, or
CONNACK p99 above --connack-slo); 3 inconclusive (the replay fell behind its
schedule, or failed on this machine); 2 usage, input or I/O errors, a plan
this machine cannot drive; 130 when interrupted (the partial report is still
printed).`,
		OnUsageError: onUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "replay the socket-opens from this instant, RFC 3339 (default: the start of the first incident check infers)"},
			&cli.IntFlag{Name: "devices", Usage: "replay a random sample of this many devices (0: all)"},
			&cli.Float64Flag{Name: "speed", Value: 1, Usage: "compress time: 10 plays ten times faster"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the sample and of the what-if's draws"},
			&cli.StringFlag{Name: "policy", Usage: "replay a what-if: the same devices under this policy (a preset name or a policy file)"},
			&cli.StringFlag{Name: "library-reconnect", Usage: "with --policy: the MQTT library's own reconnect loop beside the manager, under this policy"},
			&cli.BoolFlag{Name: "compare", Usage: "with --policy: replay the recorded schedule, then the what-if, and compare them"},
			&cli.IntFlag{Name: "keepalive", Value: replay.DefaultKeepalive, Usage: "the devices' keepalive, s (a what-if policy's keepalive_s overrides it)"},
			&cli.StringFlag{Name: "broker", Usage: "mqtt://HOST:PORT or mqtts://HOST:PORT (default: an embedded broker)", Sources: cli.EnvVars("STORMAUDIT_BROKER")},
			&cli.StringFlag{Name: "ca", Usage: "with mqtts: the CA certificates (PEM) to trust"},
			&cli.StringFlag{Name: "credentials", Usage: "a file: the username on its first line, the password on its second"},
			&cli.StringFlag{Name: "protocol", Value: "3.1.1", Usage: "MQTT 3.1.1 or 5"},
			&cli.StringFlag{Name: "capacity", Usage: "embedded broker: accept at most N connects per second (N/s), refusing the rest"},
			&cli.IntFlag{Name: "max-clients", Usage: "embedded broker: at most N clients connected at once"},
			&cli.StringFlag{Name: "broker-restart", Usage: "embedded broker: take it down at AT for DOWN (plan time), AT:DOWN, e.g. 5s:20s; or \"incident\": from the start for the incident's outage; or \"none\""},
			&cli.BoolFlag{Name: "persistence", Usage: "embedded broker: keep sessions and the messages they hold across --broker-restart (Mosquitto's persistence true)"},
			&cli.IntFlag{Name: "max-queued", Value: 1000, Usage: "embedded broker: messages a session holds beyond those in flight, at most; the rest are dropped (Mosquitto's default; 0: mochi's 8192)"},
			&cli.IntFlag{Name: "max-inflight", Usage: "embedded broker: QoS 1 and 2 messages sent to a client and not yet acknowledged, at most (0: no limit)"},
			&cli.StringFlag{Name: "link-down", Usage: "hold the devices' link down at AT for DOWN (plan time), AT:DOWN, or \"incident\": their connects then fail without a socket, while the broker stays up (with --queued, incident unless --broker-restart is given; \"none\" for no outage)"},
			&cli.IntFlag{Name: "queued", Usage: "give every device a persistent session and N messages queued for it while it is away, and measure their redelivery"},
			&cli.IntFlag{Name: "queued-qos", Value: 1, Usage: "with --queued: the QoS of the subscriptions and messages, 1 or 2"},
			&cli.DurationFlag{Name: "ack-delay", Usage: "with --queued: how long a device takes to acknowledge each message"},
			&cli.DurationFlag{Name: "queued-expiry", Usage: "with --queued: how long each message stays valid after it is published (plan time); sent as the MQTT 5 message expiry, and what arrived older is counted stale"},
			&cli.DurationFlag{Name: "connect-timeout", Value: replay.DefaultConnectTimeout, Usage: "socket-open to CONNACK, at most"},
			&cli.BoolFlag{Name: "service", Usage: "after each accepted connect, subscribe to the device's command topic and record the SUBACK as its first useful service (the service stage) in --audit"},
			&cli.DurationFlag{Name: "connack-slo", Value: replay.DefaultConnackSLO, Usage: "the CONNACK p99 the broker must keep to hold"},
			&cli.DurationFlag{Name: "max-lateness", Value: replay.DefaultMaxLateness, Usage: "the replay's own p99 lateness (overall and in the busiest seconds) within which it kept its schedule; beyond, the result is inconclusive"},
			&cli.StringFlag{Name: "audit", Usage: "write the replay's own audit log (a collector log, chained per device) to this file"},
			&cli.StringFlag{Name: "key", Usage: "with --audit: sign its checkpoints with this key (NAME.key)", Sources: cli.EnvVars("STORMAUDIT_KEY")},
			&cli.StringFlag{Name: "shard", Usage: "replay shard I of N (I/N): the devices k with k mod N = I, from --start-at, against --broker; --merge makes one report of the shards'"},
			&cli.StringFlag{Name: "start-at", Usage: "start the plan at this instant, RFC 3339 (the same for every shard)"},
			&cli.BoolFlag{Name: "merge", Usage: "INPUT... are the shards' reports (--shard I/N --format json): merge them into one report"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "text or json"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no ingest summary and no progress", Sources: boolEnv("STORMAUDIT_QUIET")},
		},
		Action: runReplay,
	}
}

func runReplay(ctx context.Context, cmd *cli.Command) error {
	format := cmd.String("format")
	if format != "text" && format != "json" {
		return usageErr("replay: --format: expected text or json, found %q", format)
	}
	if cmd.Bool("merge") {
		return runReplayMerge(cmd, format)
	}
	setup, err := replaySetup(cmd)
	if err != nil {
		return err
	}
	plans, outage, err := replayPlans(ctx, cmd)
	if err != nil {
		return err
	}
	setup.fromIncident = outage > 0
	if setup.restart != nil && setup.restart.Down < 0 { // --broker-restart incident
		if outage <= 0 {
			return usageErr("replay: --broker-restart incident: no incident with a first connect after it at --from")
		}
		setup.restart.Down = outage
	}
	if setup.opts.Queue != nil && !cmd.IsSet("link-down") && setup.restart == nil && outage > 0 {
		// Against a broker that is up, the devices would be back at their
		// first retry, which failed in the incident, and nothing would
		// queue for the outage's length: --queued means them away for it.
		setup.opts.LinkDown = &replay.Outage{Down: -1}
		if !cmd.Bool("quiet") {
			fmt.Fprintf(cmd.Root().ErrWriter, "stormaudit: replay: --queued: the devices' link is down for the incident's outage (%v), as --link-down incident; --link-down none replays without\n", outage.Round(time.Millisecond))
		}
	}
	if setup.opts.LinkDown != nil && setup.opts.LinkDown.Down < 0 { // --link-down incident
		if outage <= 0 {
			return usageErr("replay: --link-down incident: no incident with a first connect after it at --from")
		}
		setup.opts.LinkDown.Down = outage
	}
	defer tuneReplayGC(availableMemory())()
	var reps []*replay.Report
	for _, p := range plans {
		rep, err := replayOne(ctx, cmd, setup, p)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
		if ctx.Err() != nil {
			break
		}
	}
	if err := writeReplay(cmd, format, reps); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return interrupted(errors.New("replay: interrupted; the report above is partial"))
	}
	return replayResult(reps)
}

// writeReplay writes the reports in the format asked.
func writeReplay(cmd *cli.Command, format string, reps []*replay.Report) error {
	out := cmd.Root().Writer
	var err error
	if format == "json" {
		err = replay.WriteJSON(out, reps...)
	} else {
		err = replay.WriteText(out, reps...)
	}
	if err != nil {
		return failed("replay", err)
	}
	return nil
}

// replayResult returns the error whose exit status the reports' results
// call for: 1 a broker did not hold, 3 inconclusive, nil held.
func replayResult(reps []*replay.Report) error {
	for _, rep := range reps {
		if !rep.Held && !rep.Inconclusive {
			return verdict(fmt.Errorf("replay: %s: %s", rep.Plan, rep.Verdict))
		}
	}
	for _, rep := range reps {
		if rep.Inconclusive {
			return inconclusive(fmt.Errorf("replay: %s: %s", rep.Plan, rep.Verdict))
		}
	}
	return nil
}

// replaySettings are what every replay of one command shares.
type replaySettings struct {
	opts     replay.Options
	embedded bool
	broker   replay.BrokerOptions
	restart  *replay.Restart // At and Down; Stop and Start are the embedded broker's
	audit    string
	slo      time.Duration
	lateness time.Duration // --max-lateness
	// fromIncident: the plans start at an incident's loss
	fromIncident bool
}

// replaySetup reads the broker's flags.
func replaySetup(cmd *cli.Command) (*replaySettings, error) {
	s := &replaySettings{slo: cmd.Duration("connack-slo"), lateness: cmd.Duration("max-lateness"), audit: cmd.String("audit")}
	o := &s.opts
	o.Speed, o.ConnectTimeout, o.Service = cmd.Float64("speed"), cmd.Duration("connect-timeout"), cmd.Bool("service")
	// time compressed or stretched beyond a million-fold would overflow
	// the plan's nanoseconds (a lateness of 9e12 ms read "held")
	if !(o.Speed >= 1e-6 && o.Speed <= 1e6) {
		return nil, usageErr("replay: --speed: expected a factor from 0.000001 to 1000000, found %v", o.Speed)
	}
	if k := cmd.Int("keepalive"); k < 0 || k > 65535 {
		return nil, usageErr("replay: --keepalive: expected seconds from 0 to 65535 (MQTT's two bytes; 0: none), found %d", k)
	}
	if n := cmd.Int("max-clients"); n < 0 {
		return nil, usageErr("replay: --max-clients: expected a count >= 0 (0: no limit), found %d", n)
	}
	if o.ConnectTimeout <= 0 {
		return nil, usageErr("replay: --connect-timeout: expected a duration > 0, found %v", o.ConnectTimeout)
	}
	if n := cmd.Int("devices"); n < 0 {
		return nil, usageErr("replay: --devices: expected a count >= 0 (0: all), found %d", n)
	}
	if slo := cmd.Duration("connack-slo"); slo <= 0 {
		return nil, usageErr("replay: --connack-slo: expected a duration > 0, found %v", slo)
	}
	if late := cmd.Duration("max-lateness"); late <= 0 {
		return nil, usageErr("replay: --max-lateness: expected a duration > 0, found %v", late)
	}
	switch cmd.String("protocol") {
	case "3.1.1", "4":
		o.Protocol = replay.MQTT311
	case "5":
		o.Protocol = replay.MQTT5
	default:
		return nil, usageErr("replay: --protocol: expected 3.1.1 or 5, found %q", cmd.String("protocol"))
	}
	if err := queueFlags(cmd, s); err != nil {
		return nil, err
	}
	if err := shardFlags(cmd, s); err != nil {
		return nil, err
	}
	user, pass, err := mqttCredentials(cmd.String("credentials"))
	if err != nil {
		return nil, usageErr("replay: --credentials: %v", err)
	}
	o.Username, o.Password = user, pass
	if b := cmd.String("broker"); b != "" {
		for _, f := range []string{"capacity", "max-clients", "broker-restart", "persistence", "max-queued", "max-inflight"} {
			if cmd.IsSet(f) {
				return nil, usageErr("replay: --%s models the embedded broker; --broker names another (set its own limits there)", f)
			}
		}
		if err := brokerURL(b, cmd.String("ca"), o); err != nil {
			return nil, usageErr("replay: --broker: %v", err)
		}
		return s, nil
	}
	s.embedded = true
	if c := cmd.String("capacity"); c != "" {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSuffix(c, "/s"), "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != strings.TrimSuffix(c, "/s") {
			return nil, usageErr("replay: --capacity: expected connects per second, N/s, found %q", c)
		}
		s.broker.Capacity = n
	}
	s.broker.MaxClients = int(cmd.Int("max-clients"))
	s.broker.MaxQueued, s.broker.MaxInflight = int(cmd.Int("max-queued")), int(cmd.Int("max-inflight"))
	s.broker.Persistent = cmd.Bool("persistence")
	if err := s.broker.Validate(); err != nil {
		return nil, usageErr("replay: %v", err)
	}
	restart, err := outageFlag(cmd, "broker-restart")
	if err != nil {
		return nil, err
	}
	if restart != nil {
		s.restart = &replay.Restart{At: restart.At, Down: restart.Down}
	}
	return s, nil
}

// outageFlag reads --broker-restart or --link-down: AT:DOWN, or
// "incident", from the start for the incident's outage (Down -1 until it
// is known); nil when not given.
func outageFlag(cmd *cli.Command, name string) (*replay.Outage, error) {
	r := cmd.String(name)
	switch r {
	case "", "none":
		return nil, nil
	case "incident":
		return &replay.Outage{Down: -1}, nil
	}
	at, down, ok := strings.Cut(r, ":")
	a, err1 := time.ParseDuration(at)
	d, err2 := time.ParseDuration(down)
	if !ok || err1 != nil || err2 != nil || a < 0 || d <= 0 {
		return nil, usageErr("replay: --%s: expected AT:DOWN, two durations, e.g. 5s:20s, or incident, found %q", name, r)
	}
	return &replay.Outage{At: a, Down: d}, nil
}

// queueFlags reads --queued, --queued-qos, --ack-delay, --queued-expiry
// and --link-down
// into s.
func queueFlags(cmd *cli.Command, s *replaySettings) error {
	link, err := outageFlag(cmd, "link-down")
	if err != nil {
		return err
	}
	s.opts.LinkDown = link
	if !cmd.IsSet("queued") {
		if cmd.IsSet("queued-qos") || cmd.IsSet("ack-delay") || cmd.IsSet("queued-expiry") {
			return usageErr("replay: --queued-qos, --ack-delay and --queued-expiry need --queued, the messages queued for each device")
		}
		return nil
	}
	q := &replay.Queue{Messages: int(cmd.Int("queued")), QoS: byte(cmd.Int("queued-qos")), AckDelay: cmd.Duration("ack-delay"),
		Expiry: cmd.Duration("queued-expiry")}
	if n := cmd.Int("queued-qos"); n != 1 && n != 2 {
		return usageErr("replay: --queued-qos: expected 1 or 2, found %d", n)
	}
	if err := q.Validate(); err != nil {
		return usageErr("replay: %v", err)
	}
	s.opts.Queue = q
	return nil
}

// brokerURL reads mqtt://HOST:PORT or mqtts://HOST:PORT into o. A URL
// with credentials is refused: they would be in the shell's history and
// the process list.
func brokerURL(raw, ca string, o *replay.Options) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Path != "" && u.Path != "/" {
		return fmt.Errorf("expected mqtt://HOST:PORT or mqtts://HOST:PORT")
	}
	if u.User != nil {
		return fmt.Errorf("the URL holds credentials; give them in STORMAUDIT_MQTT_USERNAME and STORMAUDIT_MQTT_PASSWORD or --credentials FILE")
	}
	host, port := u.Hostname(), u.Port()
	switch u.Scheme {
	case "mqtt":
		port = cmp(port, "1883")
	case "mqtts":
		port = cmp(port, "8883")
		o.TLS = &tls.Config{ServerName: host}
		if ca != "" {
			pem, err := sidefile.Read(ca, sidefile.MaxText)
			if err != nil {
				return err
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return fmt.Errorf("--ca %s: no PEM certificate in it", ca)
			}
			o.TLS.RootCAs = pool
		}
	default:
		return fmt.Errorf("scheme %q: expected mqtt or mqtts", u.Scheme)
	}
	o.Broker = net.JoinHostPort(host, port)
	o.BrokerName = u.Scheme + "://" + o.Broker
	return nil
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// mqttCredentials reads the broker credentials from the environment or
// from a file.
func mqttCredentials(file string) (user, pass []byte, err error) {
	if u, ok := os.LookupEnv("STORMAUDIT_MQTT_USERNAME"); ok {
		user = []byte(u)
	}
	if p, ok := os.LookupEnv("STORMAUDIT_MQTT_PASSWORD"); ok {
		pass = []byte(p)
	}
	if file == "" {
		return user, pass, nil
	}
	b, err := sidefile.Read(file, sidefile.MaxKey)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.SplitN(strings.TrimRight(string(b), "\r\n"), "\n", 2)
	user = []byte(strings.TrimRight(lines[0], "\r"))
	if len(lines) == 2 {
		pass = []byte(strings.TrimRight(lines[1], "\r"))
	}
	return user, pass, nil
}

// replayPlans reads INPUT and returns what replay.Plans makes of it,
// as the flags ask: the recorded plan, the what-if, or both, and the
// outage they start in (0 if none).
func replayPlans(ctx context.Context, cmd *cli.Command) ([]*replay.Plan, time.Duration, error) {
	po, err := planOptions(cmd)
	if err != nil {
		return nil, 0, err
	}
	in, err := openInput(ctx, cmd, "replay")
	if err != nil {
		return nil, 0, err
	}
	defer in.close()
	fs, err := analyze.Schedule(in.dir)
	if err != nil {
		return nil, 0, failed("replay", err)
	}
	plans, outage, err := replay.Plans(ctx, fs, po)
	var noOpen *replay.NoOpenError
	switch {
	case errors.As(err, &noOpen):
		return nil, 0, usageErr("replay: --from: %v", err)
	case err != nil:
		return nil, 0, failed("replay", err)
	}
	return plans, outage, nil
}

// planOptions reads --from, --keepalive, --devices, --seed, --policy,
// --library-reconnect and --compare.
func planOptions(cmd *cli.Command) (replay.PlanOptions, error) {
	po := replay.PlanOptions{Keepalive: uint16(cmd.Int("keepalive")), Devices: int(cmd.Int("devices")),
		Seed: cmd.Uint64("seed"), Compare: cmd.Bool("compare")}
	if f := cmd.String("from"); f != "" {
		t, err := time.Parse(time.RFC3339Nano, f)
		if err != nil {
			return po, usageErr("replay: --from: expected an RFC 3339 time, found %q", f)
		}
		po.From = t
	}
	name := cmd.String("policy")
	if name == "" {
		if cmd.Bool("compare") || cmd.IsSet("library-reconnect") {
			return po, usageErr("replay: --compare and --library-reconnect need --policy, the what-if's policy")
		}
		return po, nil
	}
	pol, err := policy.Resolve(name)
	if err != nil {
		return po, usageErr("replay: --policy: %v", err)
	}
	po.Policy = &pol
	if lib := cmd.String("library-reconnect"); lib != "" {
		lp, err := policy.Resolve(lib)
		if err != nil {
			return po, usageErr("replay: --library-reconnect: %v", err)
		}
		po.Library = &lp
	}
	return po, nil
}

// replayOne replays one plan, against a fresh embedded broker when there
// is no other.
func replayOne(ctx context.Context, cmd *cli.Command, s *replaySettings, p *replay.Plan) (*replay.Report, error) {
	o := s.opts
	if o.Shard != nil {
		sh := *o.Shard
		sh.Plan = replay.PlanDigest(p)
		o.Shard, p = &sh, p.Shard(sh.I, sh.N)
	}
	addr := o.Broker
	if s.embedded {
		addr = "127.0.0.1:0"
	}
	load := replay.Load{Speed: o.Speed, Addr: addr, Embedded: s.embedded, Seed: cmd.Uint64("seed")}
	if o.Shard != nil {
		load.Shards = o.Shard.N
	}
	need := replay.PlanBudget(p, load, replay.ThisMachine())
	if err := need.Err(); err != nil {
		return nil, usageErr("replay: %s: %v", p.Name, err)
	}
	if !cmd.Bool("quiet") {
		fmt.Fprintf(cmd.Root().ErrWriter, "stormaudit: replay: %s: %s\n", p.Name, need)
	}
	if s.embedded {
		b, err := replay.StartEmbedded(s.broker)
		if err != nil {
			return nil, failed("replay: embedded broker", err)
		}
		defer b.Close()
		o.Broker, o.BrokerName, o.Wills, o.Setup, o.AcceptErrors = b.Addr(), "embedded", b.Wills, b.Setup, b.AcceptErrors
		if s.restart != nil {
			o.Restart = &replay.Restart{At: s.restart.At, Down: s.restart.Down, Stop: b.Stop, Start: b.Start}
		}
	}
	if s.audit != "" {
		w, err := openReplayAudit(cmd, s.audit, p)
		if err != nil {
			return nil, err
		}
		defer w.Close()
		o.Audit = w
	}
	o.LostAtStart = s.fromIncident
	bar := newReplayProgress(cmd.Root().ErrWriter, cmd.Bool("quiet"), p.Name)
	o.Progress = bar.update
	rep, err := replay.Run(ctx, p, o)
	bar.done()
	if err != nil && ctx.Err() != nil {
		return nil, interrupted(err)
	}
	if err != nil {
		return nil, failed("", err) // its errors say "replay: "
	}
	rep.Broker = o.BrokerName
	rep.Judge(s.slo, s.lateness)
	return rep, nil
}

// openReplayAudit opens the replay's audit log: the file given, or for a
// what-if of --compare, the file with ".what-if" before its extension.
func openReplayAudit(cmd *cli.Command, path string, p *replay.Plan) (*hashchain.Writer, error) {
	if strings.HasPrefix(p.Name, "what-if") && cmd.Bool("compare") {
		ext := ""
		if i := strings.LastIndexByte(path, '.'); i > strings.LastIndexByte(path, '/') {
			path, ext = path[:i], path[i:]
		}
		path += ".what-if" + ext
	}
	opts := hashchain.WriterOptions{Log: "stormaudit/replay/" + time.Now().UTC().Format("20060102T150405Z")}
	if k := cmd.String("key"); k != "" {
		signer, err := loadSigner(k)
		if err != nil {
			return nil, usageErr("replay: --key: %v", err)
		}
		opts.Signer = signer
	}
	w, _, err := hashchain.OpenWriter(path, opts)
	if err != nil {
		return nil, failed("replay: --audit", err)
	}
	return w, nil
}

// replayProgress draws one line on a terminal and nothing elsewhere.
type replayProgress struct {
	w     io.Writer
	on    bool
	name  string
	drawn bool
}

func newReplayProgress(w io.Writer, quiet bool, name string) *replayProgress {
	f, ok := w.(*os.File)
	return &replayProgress{w: w, on: !quiet && ok && term.IsTerminal(int(f.Fd())), name: name}
}

func (p *replayProgress) update(done, total int) {
	if p.on {
		p.drawn = true
		fmt.Fprintf(p.w, "\r\x1b[Kreplaying %s: %d of %d connects", p.name, done, total)
	}
}

func (p *replayProgress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
