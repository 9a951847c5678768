package realcorpus

import (
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
