package analyze

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// clientIDChurn flags a host that appears under several client ids with
// persistent sessions, one after the other: each new id leaves the
// broker a session that no client will resume.
type clientIDChurn struct {
	Hosts map[string][]churnID
}

func (r *clientIDChurn) merge(next Rule) {
	n := next.(*clientIDChurn)
	if r.Hosts == nil {
		r.Hosts = map[string][]churnID{}
	}
	for host, ids := range n.Hosts {
		r.Hosts[host] = append(r.Hosts[host], ids...)
	}
}

// churnID is one client id of a host: the span of its records.
type churnID struct {
	ID          string
	First, Last int64 // the earliest and latest recorded_at of its records
	Up          bool  // its last record is connected: the id is still in use after it
	Held        bool  // it held a session: it has a connected or disconnected record
	FirstRef    Ref
	LastRef     Ref
	LastOutcome auditfmt.Outcome
}

func (*clientIDChurn) Info() RuleInfo {
	return RuleInfo{ID: "client-id-churn", Severity: Warning, Title: "one host appearing under several client ids with persistent sessions",
		Help: "A host (host_id) whose persistent-session client ids (clean_session false) follow one another: a new id's " +
			"first record comes after an earlier id's last record, and that earlier id did not end connected. Each " +
			"abandoned id leaves the broker a persistent session, with its queued messages, that no client will resume: " +
			"orphaned sessions that leak broker memory during the surge. Client ids active at the same time on one host " +
			"(a gateway) are not churn."}
}

func (r *clientIDChurn) Device(_ *Context, d *Device) {
	n := len(d.Events)
	if d.Host == "" || d.Clean || n == 0 {
		return
	}
	lo, hi := 0, 0
	for i := range d.Events {
		if d.Events[i].At < d.Events[lo].At {
			lo = i
		}
		if d.Events[i].At >= d.Events[hi].At {
			hi = i
		}
	}
	last := d.Events[n-1].Outcome
	held := false
	for i := range d.Events {
		held = held || d.Events[i].Outcome == auditfmt.Connected || d.Events[i].Outcome == auditfmt.Disconnected
	}
	if r.Hosts == nil {
		r.Hosts = map[string][]churnID{}
	}
	host := strings.Clone(d.Host)
	r.Hosts[host] = append(r.Hosts[host], churnID{ID: strings.Clone(d.ID), First: d.Events[lo].At, Last: d.Events[hi].At,
		Up: last == auditfmt.Connected, Held: held, FirstRef: d.Events[lo].Ref, LastRef: d.Events[hi].Ref, LastOutcome: last})
}

func (r *clientIDChurn) Finish(c *Context) {
	for _, host := range slices.Sorted(maps.Keys(r.Hosts)) {
		ids := r.Hosts[host]
		if len(ids) < 2 {
			continue
		}
		slices.SortFunc(ids, func(a, b churnID) int { return cmp.Or(cmp.Compare(a.First, b.First), strings.Compare(a.ID, b.ID)) })
		if f, ok := churnFinding(host, ids); ok {
			c.Report(f)
		}
	}
	r.Hosts = nil
}

// churnSwap is an abandoned id of a host and the id that followed it, as
// indices into the host's ids.
type churnSwap struct{ old, next int }

// abandoned returns the ids (sorted by first record) that a later id
// replaced: not still in use at the end of their records, and followed by
// an id whose first record is later than their last.
func abandoned(ids []churnID) []churnSwap {
	var swaps []churnSwap
	for i := range ids {
		if ids[i].Up {
			continue
		}
		if j := slices.IndexFunc(ids, func(y churnID) bool { return y.First > ids[i].Last }); j >= 0 {
			swaps = append(swaps, churnSwap{i, j})
		}
	}
	return swaps
}

// churnFinding reports the abandoned ids of host, if any.
func churnFinding(host string, ids []churnID) (Finding, bool) {
	swaps := abandoned(ids)
	if len(swaps) == 0 {
		return Finding{}, false
	}
	newest, orphans := ids[len(ids)-1], 0
	f := Finding{Rule: "client-id-churn", Kind: "client-id-churn/abandoned-ids", Severity: Warning, Device: newest.ID, Start: ids[0].First, End: newest.Last}
	var ex []string
	for k, s := range swaps {
		o, n := &ids[s.old], &ids[s.next]
		for _, r := range []Ref{o.LastRef, n.FirstRef} {
			if !slices.Contains(f.Records, r) {
				f.Records = append(f.Records, r)
			}
		}
		f.End = max(f.End, n.Last)
		held := "no connected or disconnected record: it may not have held a session"
		if o.Held {
			orphans++
			held = "it held a session"
		}
		if k < 4 {
			ex = append(ex, fmt.Sprintf("%s (records %s to %s, the last %s; %s) was followed by %s (first record %s)",
				o.ID, timeText(o.First), timeText(o.Last), o.LastOutcome, held, n.ID, timeText(n.First)))
		}
	}
	f.Message = fmt.Sprintf("host %s reconnected under %d client ids in turn with persistent sessions: %d abandoned, %s orphaned",
		host, len(ids), len(swaps), nOf(orphans, "broker session"))
	f.Explanation = fmt.Sprintf("Host %s wrote records under %d client ids with clean_session false (%s). %s%s. "+
		"An id whose last record is not connected, followed on the same host by an id whose first record is later, was abandoned: "+
		"when it held a session (a connected or disconnected record shows it did), the broker keeps that persistent session, "+
		"and the messages queued for it, for a client that will not come back.",
		host, len(ids), idList(ids), strings.Join(ex, "; "), moreText(len(swaps), 4))
	return f, true
}

// idList names the ids, at most 6.
func idList(ids []churnID) string {
	var names []string
	for i := range ids[:min(len(ids), 6)] {
		names = append(names, ids[i].ID)
	}
	return strings.Join(names, ", ") + moreText(len(ids), 6)
}
