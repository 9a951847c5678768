package analyze

import (
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/stormaudit/stormaudit/dataset"
)

// Timeline reads the dataset in dir and returns the device whose
// client_id is id, built (Device.Build), with the names of the inputs its
// Ref.Source indexes. A device absent from the dataset is a
// *NoDeviceError.
func Timeline(dir, id string) (*Device, []string, error) {
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
		return nil, nil, &NoDeviceError{ID: id, Devices: near.n, Near: near.ids}
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

// nearIDs keeps the ids that share the longest prefix with a wanted id.
type nearIDs struct {
	n    int
	best int
	ids  []string
}

func (s *nearIDs) add(want, id string) {
	s.n++
	p := commonPrefix(want, id)
	switch {
	case p > s.best || s.ids == nil:
		s.best, s.ids = p, []string{id}
	case p == s.best && len(s.ids) < 3:
		s.ids = append(s.ids, id)
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
