package analyze

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/internal/near"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/stormaudit/stormaudit/dataset"
)

// Timeline reads the dataset in dir and returns the device whose
// client_id is id, built (Device.Build), with the names of the inputs its
// Ref.Source indexes. A device absent from the dataset is a
// *NoDeviceError.
func Timeline(dir, id string) (*Device, []string, error) {
	d, sources, _, err := TimelineIn(dir, id, time.Time{}, time.Time{})
	return d, sources, err
}

// TimelineIn is Timeline of the device's records recorded in [since,
// until) (a zero bound: unbounded); it also returns how many of its
// records it left out. A device with none in the window is an error that
// says so.
func TimelineIn(dir, id string, since, until time.Time) (*Device, []string, int64, error) {
	found, sources, err := timeline(dir, id)
	if err != nil {
		return nil, nil, 0, err
	}
	w := newWindow(since, until)
	if w == nil {
		return found, sources, 0, nil
	}
	events, host, hosts := slices.Clone(found.Events), found.Host, found.Hosts
	found.reset(id)
	found.Events, found.Host, found.Hosts = events, host, hosts
	if !w.cut(found) {
		return nil, nil, w.outside, fmt.Errorf("device %q has no record in the window (all %d of its records are outside it)", id, w.outside)
	}
	found.Build()
	return found, sources, w.outside, nil
}

// timeline is Timeline.
func timeline(dir, id string) (*Device, []string, error) {
	var found *Device
	var near nearIDs
	_, sources, err := devices(dir, func(d *Device) error {
		if d.ID == id {
			found = d.clone() // d is reused for the next device
			return errEnough
		}
		near.add(id, d.ID)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if found == nil {
		ids := near.ids
		if ids == nil {
			ids = near.far
		}
		return nil, nil, &NoDeviceError{ID: id, Devices: near.n, Near: ids}
	}
	return found, sources, nil
}

// NoDeviceError reports a client_id that is not in a dataset.
type NoDeviceError struct {
	ID      string
	Devices int      // devices in the dataset; -1 when not counted
	Near    []string // up to three of them whose ids are most like ID
}

func (e *NoDeviceError) Error() string {
	msg := fmt.Sprintf("device %q is not in the dataset", e.ID)
	if e.Devices < 0 {
		return msg // not counted
	}
	msg += fmt.Sprintf(" (%d devices", e.Devices)
	if len(e.Near) > 0 {
		msg += "; the nearest: " + strings.Join(e.Near, ", ")
	}
	return msg + ")"
}

// nearIDs keeps the three ids most like a wanted one, within
// near.Nearest's bound (a third of its length in edits): the fewest edits
// away, then the longest common prefix, then the first read; and, for
// when none is that close, the three first that share its longest prefix. dev-41 finds dev-0041, not dev-0001 (every dev-NNNN
// shares the prefix dev-).
type nearIDs struct {
	n   int
	ids []string
	key [][2]int // each id's distance and negated common prefix
	// far are the ids that share the longest prefix with the wanted one,
	// up to three, named when none is within the bound
	far     []string
	farBest int
}

func (s *nearIDs) add(want, id string) {
	s.n++
	k := [2]int{near.Distance(want, id), -commonPrefix(want, id)}
	if k[0] > max(1, len(want)/3) || k[0] >= len(want) { // too far to be what was meant (near.Nearest's bound)
		switch p := -k[1]; {
		case p > s.farBest || s.far == nil:
			s.farBest, s.far = p, []string{strings.Clone(id)}
		case p == s.farBest && len(s.far) < 3:
			s.far = append(s.far, strings.Clone(id))
		}
		return
	}
	i := len(s.ids)
	for i > 0 && (k[0] < s.key[i-1][0] || k[0] == s.key[i-1][0] && k[1] < s.key[i-1][1]) {
		i--
	}
	if i >= 3 {
		return
	}
	s.ids, s.key = slices.Insert(s.ids, i, strings.Clone(id)), slices.Insert(s.key, i, k)
	if len(s.ids) > 3 {
		s.ids, s.key = s.ids[:3], s.key[:3]
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// DeviceIDs returns the client_ids of the dataset in dir, in dataset
// order (sorted), reading only the client_id column.
func DeviceIDs(dir string) ([]string, error) {
	r, err := dataset.OpenArrowColumns(dir, 0, "client_id")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var ids []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return ids, nil
		}
		if err != nil {
			return nil, err
		}
		col, ok := rec.Column(0).(*array.String)
		if !ok {
			rec.Release()
			return nil, fmt.Errorf("column client_id: unexpected Arrow type %s", rec.Column(0).DataType())
		}
		for i := range col.Len() {
			if id := col.Value(i); len(ids) == 0 || ids[len(ids)-1] != id {
				ids = append(ids, strings.Clone(id)) // not the batch's memory, released below
			}
		}
		rec.Release()
	}
}
