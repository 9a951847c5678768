package brokerlog

import (
	"hash/maphash"
	"strings"
)

// Mosquitto's wills and status publishes (log_type debug or all). Its
// "Will message specified (N bytes) (rR, qQ)." names no client: it follows
// the "New client connected ... as ID" of the connection that declared it,
// and the will's topic follows it on a line of its own that begins with a
// tab (src/handle_connect.c). A "Received PUBLISH from ID (dD, qQ, rR, mM,
// 'TOPIC', ... (N bytes))" is a Status when TOPIC is the topic of ID's
// will: every other publish (telemetry, commands) is skipped, as before.

// willState is what the parser keeps of wills: the client whose connect
// is being read, whether its will's topic comes next, and the hash of
// each client's will topic (one a client: memory grows with the clients
// the log names, not with its lines).
type willState struct {
	accepting string // the client of the last "New client connected"
	topicNext bool   // the last line was its "Will message specified"
	seed      maphash.Seed
	topics    map[string]uint64
	longest   int // the longest id in topics
}

// accepted notes that the broker accepted a connection of id: a will line
// that follows is its. The id is copied: it must not hold its line.
func (w *willState) accepted(id string) { w.accepting, w.topicNext = strings.Clone(id), false }

// line reads msg, a Mosquitto message after its stamp, as a will's line or
// a status publish, into out, and reports whether it was one.
func (w *willState) line(msg string, out *outcome) bool {
	if w.topicNext {
		w.topicNext = false
		if topic, ok := strings.CutPrefix(msg, "\t"); ok {
			if w.topics == nil {
				w.topics, w.seed = map[string]uint64{}, maphash.MakeSeed()
			}
			w.topics[w.accepting] = maphash.String(w.seed, topic)
			w.longest = max(w.longest, len(w.accepting))
			out.ev.Kind, out.ev.Client, out.ev.Detail = Will, w.accepting, topic
			return true
		}
	}
	if strings.HasPrefix(msg, "Will message specified (") {
		w.topicNext = w.accepting != ""
		out.skip = true
		return true
	}
	if strings.HasPrefix(msg, "No will message specified") {
		delete(w.topics, w.accepting)
		out.skip = true
		return true
	}
	rest, ok := strings.CutPrefix(msg, "Received PUBLISH from ")
	if !ok || len(w.topics) == 0 {
		return false
	}
	if id, ok := w.status(rest); ok {
		out.ev.Kind, out.ev.Client, out.ev.Detail = Status, id, msg
		return true
	}
	return false
}

// status reads "ID (dD, qQ, rR, mM, 'TOPIC', ... (N bytes))" and returns
// ID when TOPIC is its will's topic. An id may hold " (d" itself: each
// place it occurs, up to the longest id with a will, whose flags follow
// in Mosquitto's form, is tried (a line cannot make it look up more than
// that many ids).
func (w *willState) status(rest string) (string, bool) {
	end := strings.LastIndex(rest, "', ... (")
	if end < 0 {
		return "", false
	}
	for k := 0; k < end && k <= w.longest; {
		i := strings.Index(rest[k:end], " (d")
		if i < 0 || k+i > w.longest {
			return "", false
		}
		id, flags := rest[:k+i], rest[k+i+2:end]
		k += i + 1
		topic, ok := publishTopic(flags)
		if !ok {
			continue
		}
		if want, ok := w.topics[id]; ok && maphash.String(w.seed, topic) == want {
			return id, true
		}
	}
	return "", false
}

// publishTopic reads the topic after Mosquitto's flags of a PUBLISH,
// "dD, qQ, rR, mM, 'TOPIC": a digit each, and the message id's digits.
func publishTopic(s string) (string, bool) {
	for _, f := range []string{"d", ", q", ", r"} {
		var ok bool
		if s, ok = strings.CutPrefix(s, f); !ok || s == "" || s[0] < '0' || s[0] > '9' {
			return "", false
		}
		s = s[1:]
	}
	s, ok := strings.CutPrefix(s, ", m")
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if !ok || n == 0 {
		return "", false
	}
	return strings.CutPrefix(s[n:], ", '")
}
