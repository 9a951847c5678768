// Command gen records stormaudit's real-client corpus: fleets of real MQTT
// clients (Python paho-mqtt 1.6, Go paho.mqtt.golang) against a real
// Mosquitto that is killed with SIGKILL and restarted, each fleet's audit
// log kept beside the broker's own log as ground truth. See
// docs/corpus.md.
//
//	go run ./internal/testonly/realcorpus/gen -out testdata/realclients
//
// It needs Debian's mosquitto and python3-paho-mqtt. A run takes about two
// minutes per scenario.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stormaudit/stormaudit/internal/testonly/realcorpus"
)

func main() {
	tools := realcorpus.DefaultTools()
	out := flag.String("out", "testdata/realclients", "corpus directory")
	only := flag.String("only", "", "record only this scenario")
	short := flag.Bool("short", false, "record the short variant the live test records (40 devices, a 6 s outage)")
	flag.StringVar(&tools.Mosquitto, "mosquitto", tools.Mosquitto, "the broker")
	flag.StringVar(&tools.Python, "python", tools.Python, "a Python with paho-mqtt 1.x")
	flag.Parse()
	for _, sc := range realcorpus.Scenarios {
		if *only != "" && sc.Name != *only {
			continue
		}
		if *short {
			sc = sc.Short()
		}
		var outages []string
		for _, o := range sc.Outages {
			outages = append(outages, fmt.Sprintf("%s %s", o.Kind, o.Down))
		}
		fmt.Fprintf(os.Stderr, "gen: %s: %d devices, outages: %s\n", sc.Name, sc.Devices, strings.Join(outages, ", "))
		if err := realcorpus.Record(sc, filepath.Join(*out, sc.Name), tools); err != nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", sc.Name, err)
			os.Exit(1)
		}
	}
}
