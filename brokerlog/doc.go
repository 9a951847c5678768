// Package brokerlog reads an MQTT broker's own log of client connections
// into a normalised list of events, so that the broker's log can stand as
// a second witness beside the devices' audit logs.
//
// # Formats
//
// [Read] knows four brokers' logs (docs/brokerlog.md cites where each is
// documented):
//
//   - [Mosquitto]: the broker's log file or standard output, each line
//     stamped "EPOCH: " (the default, whole seconds) or by
//     log_timestamp_format ("%Y-%m-%dT%H:%M:%S" or "%Y-%m-%d %H:%M:%S",
//     with or without a fraction and a zone), and the corpus recorder's
//     form (internal/testonly/realcorpus): an RFC 3339 UTC stamp to the
//     microsecond, a space, then Mosquitto's line or a recorder mark
//     ("corpus: SIGKILL sent to the broker"); and Mosquitto's lines behind
//     a syslog or journal prefix ("HOST mosquitto[PID]: ").
//   - [EMQX]: the rule-engine events of $events/client_connected and
//     $events/client_disconnected, one JSON object a line.
//   - [AWSIoT]: AWS IoT Core lifecycle events, one JSON object a line or
//     a JSON array of them.
//   - [HiveMQ]: HiveMQ's event.log.
//
// The format is told from the first non-blank records unless
// [Options].Format names it; gzip is told by its magic bytes. The input
// is read as a stream, a line at a time, and no line is decoded past
// [MaxLineBytes]. [Scan] hands each event over as it is read, so its
// memory does not grow with the input; [Read] keeps them all. Neither
// reads more than [Options].MaxBytes of text (1 GiB by default), counted
// after gzip decompression: a small gzip that expands past it is refused
// with a [*LimitError], never read in part.
//
// # Events
//
// Each record that says something of connections becomes one [Event]:
// [Accepted] when the broker accepted a connection (sent a successful
// CONNACK), [Closed] when a connection ended, with a [Reason], and
// [BrokerUp], [BrokerDown] and [Mark] for the broker itself and the
// recorder's notes. A Mosquitto takeover ("Client X already connected,
// closing old connection.") is the Closed of the old connection, with
// Reason [Takeover]; the new connection's "New client connected" follows
// it. An event's At is Unix nanoseconds in UTC and Res the resolution of
// the stamp it came from; stamps that name no zone are read in
// [Options].TZ (UTC by default).
//
// # Accounting
//
// Nothing is dropped silently. Every record is an event, a skip (a known
// line that says nothing of connections, such as Mosquitto's "Opening
// ipv4 listen socket" or "New connection from"), a reject (a record not
// understood, kept with its line, the field at fault and why), or blank:
//
//	Lines == Found + Skipped + Rejected + Blank
//
// Read returns an error only when the input cannot be read, when its
// format cannot be told, or when not one record fits the format.
//
// # Example
//
//	f, err := os.Open("broker.log")
//	if err != nil { ... }
//	defer f.Close()
//	log, err := brokerlog.Read(f, "broker.log", brokerlog.Options{})
//	if err != nil { ... }
//	for _, e := range log.Events {
//		fmt.Println(e.Time(), e.Kind, e.Client, e.Reason)
//	}
package brokerlog
