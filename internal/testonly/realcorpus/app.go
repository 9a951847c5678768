package realcorpus

import (
	"fmt"
	"strings"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

// AppClientID is the client id of the recorder's application: a client
// of the broker, not a device (the truth leaves the recorder's clients
// out).
const AppClientID = recorderClientPrefix + "app"

// recorderClientPrefix begins the client ids of the recorder's own
// clients.
const recorderClientPrefix = "corpus-"

// App is the application behind the broker that serves the devices: it
// subscribes to every device's hello (hello/ID, QoS 1) and answers each
// with a command (cmd/ID, QoS 1). A device of a Service scenario counts
// that answer as its first useful service (docs/corpus.md).
type App struct{ c mqtt.Client }

// StartApp connects the application to broker (tcp://host:port).
func StartApp(broker string) (*App, error) {
	opts := mqtt.NewClientOptions().AddBroker(broker).SetClientID(AppClientID).SetCleanSession(true).
		SetAutoReconnect(false).SetConnectRetry(false).SetConnectTimeout(5 * time.Second)
	c := mqtt.NewClient(opts)
	if t := c.Connect(); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
		return nil, errOr(t.Error(), "the application's connect timed out")
	}
	t := c.Subscribe("hello/+", 1, func(c mqtt.Client, m mqtt.Message) {
		if id, ok := strings.CutPrefix(m.Topic(), "hello/"); ok {
			c.Publish("cmd/"+id, 1, false, "welcome")
		}
	})
	if !t.WaitTimeout(10*time.Second) || t.Error() != nil {
		c.Disconnect(0)
		return nil, errOr(t.Error(), "the application's subscription timed out")
	}
	return &App{c: c}, nil
}

// Stop disconnects the application (if the broker is still there).
func (a *App) Stop() { a.c.Disconnect(100) }

// errOr returns err, or an error saying why when err is nil.
func errOr(err error, why string) error {
	if err != nil {
		return err
	}
	return &appError{why}
}

type appError struct{ why string }

func (e *appError) Error() string { return "realcorpus: " + e.why }

// CommanderClientID is the client id of the recorder's commander.
const CommanderClientID = recorderClientPrefix + "commander"

// Commander sends every device a command each period, QoS 1 on cmd/ID,
// valid for ttl: {"seq": K, "sent": UNIX, "valid_until": UNIX}. A device
// away on a persistent session has them queued by the broker, and ignores
// those that come expired (fleet.py --commands). It reconnects by itself
// after the broker's restart; what it sends while the broker is down is
// lost, as a backend's would be.
type Commander struct {
	c    mqtt.Client
	stop chan struct{}
	done chan struct{}
}

// StartCommander connects the commander to broker and starts sending to
// the devices ids.
func StartCommander(broker string, ids []string, period, ttl time.Duration) (*Commander, error) {
	opts := mqtt.NewClientOptions().AddBroker(broker).SetClientID(CommanderClientID).SetCleanSession(true).
		SetAutoReconnect(true).SetMaxReconnectInterval(time.Second).SetConnectTimeout(5 * time.Second)
	c := mqtt.NewClient(opts)
	if t := c.Connect(); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
		return nil, errOr(t.Error(), "the commander's connect timed out")
	}
	cm := &Commander{c: c, stop: make(chan struct{}), done: make(chan struct{})}
	go cm.run(ids, period, ttl)
	return cm, nil
}

func (cm *Commander) run(ids []string, period, ttl time.Duration) {
	defer close(cm.done)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for seq := 1; ; seq++ {
		select {
		case <-cm.stop:
			return
		case <-tick.C:
		}
		if !cm.c.IsConnectionOpen() {
			continue
		}
		now := time.Now()
		sent, valid := float64(now.UnixMicro())/1e6, float64(now.Add(ttl).UnixMicro())/1e6
		for _, id := range ids {
			cm.c.Publish("cmd/"+id, 1, false, fmt.Sprintf(`{"seq":%d,"sent":%.6f,"valid_until":%.6f}`, seq, sent, valid))
		}
	}
}

// Stop ends the commander.
func (cm *Commander) Stop() {
	close(cm.stop)
	<-cm.done
	cm.c.Disconnect(100)
}
