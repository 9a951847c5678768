package realcorpus

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The recorder's own marks in a broker.log.
const (
	markPrefix  = "corpus: "
	KillMark    = markPrefix + "SIGKILL sent to the broker"
	RestartMark = markPrefix + "restarting the broker"
	StopMark    = markPrefix + "stopping the fleet"
	FreezeMark  = markPrefix + "link frozen"                           // the proxy stopped forwarding
	RestoreMark = markPrefix + "link restored"                         // the proxy reset what it held and forwards again
	RefuseMark  = markPrefix + "refusing every CONNECT with CONNACK 3" // the proxy closed every connection and refuses
	ServeMark   = markPrefix + "serving again"                         // the proxy forwards again
	AppMark     = markPrefix + "the application is back"               // the recorder's application serves again
)

// StampTime is the layout of a broker.log line's stamp.
const StampTime = "2006-01-02T15:04:05.000000Z07:00"

// StampedLog writes lines stamped with the UTC time they were written.
// It is safe for concurrent use.
type StampedLog struct {
	mu sync.Mutex
	w  io.Writer
}

// NewStampedLog returns a StampedLog writing to w.
func NewStampedLog(w io.Writer) *StampedLog { return &StampedLog{w: w} }

// Line writes one line, stamped now.
func (l *StampedLog) Line(s string) {
	now := time.Now().UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s %s\n", now.Format(StampTime), s)
}

// Mark writes one of the recorder's marks.
func (l *StampedLog) Mark(s string) { l.Line(s) }

// MosquittoConf is the broker's configuration: one loopback listener,
// anonymous clients, every log line on standard output, no persistence.
func MosquittoConf(port int) string {
	return fmt.Sprintf(`listener %d 127.0.0.1
allow_anonymous true
persistence false
log_dest stdout
log_type error
log_type warning
log_type notice
log_type information
connection_messages true
max_keepalive 65535
`, port)
}

// MosquittoConfAll is MosquittoConf logging everything (log_type all),
// with persistence in the directory dir when it is not "".
func MosquittoConfAll(port int, dir string) string {
	conf := strings.Replace(MosquittoConf(port), "log_type error\n", "log_type all\n", 1)
	if dir != "" {
		conf = strings.Replace(conf, "persistence false\n", fmt.Sprintf("persistence true\npersistence_location %s/\nautosave_interval 1\n", dir), 1)
	}
	return conf
}

// Broker is a running Mosquitto whose standard output goes, line by line,
// to a StampedLog.
type Broker struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when its output is drained
}

// StartBroker starts mosquitto with the configuration file conf and waits
// until it listens. Mosquitto buffers its standard output when it is a
// pipe, so it runs under stdbuf -oL (which execs it: the process is
// mosquitto's) to have each line as it is written.
func StartBroker(mosquitto, conf string, log *StampedLog) (*Broker, error) {
	cmd := exec.Command("stdbuf", "-oL", mosquitto, "-c", conf)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b := &Broker{cmd: cmd, done: make(chan struct{})}
	running := make(chan struct{})
	var first []string // its first lines, which say why it did not start
	go func() {
		defer close(b.done)
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			log.Line(sc.Text())
			if len(first) < 5 {
				first = append(first, sc.Text())
			}
			if containsRunning(sc.Text()) {
				once.Do(func() { close(running) })
			}
		}
	}()
	select {
	case <-running:
		return b, nil
	case <-b.done:
		err := cmd.Wait()
		return nil, fmt.Errorf("%s exited before it was running (%v): %q", mosquitto, err, first)
	case <-time.After(10 * time.Second):
		b.Kill()
		return nil, fmt.Errorf("%s did not start within 10s", mosquitto)
	}
}

// Pid returns the broker's process id.
func (b *Broker) Pid() int { return b.cmd.Process.Pid }

// Kill kills the broker with SIGKILL and waits for it.
func (b *Broker) Kill() { b.signal(syscall.SIGKILL) }

// Stop stops the broker with SIGTERM and waits for it.
func (b *Broker) Stop() { b.signal(syscall.SIGTERM) }

func (b *Broker) signal(s syscall.Signal) {
	_ = b.cmd.Process.Signal(s)
	<-b.done
	_ = b.cmd.Wait()
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
