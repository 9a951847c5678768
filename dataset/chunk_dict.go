package dataset

import "encoding/binary"

// dictionary numbers the distinct values of a dictionary-encoded column
// chunk and holds them PLAIN encoded, for its dictionary page.
//
// Sorted files repeat values in runs (client_id, host_id, origin), so the
// last value is checked before the map.
type dictionary struct {
	ids    map[string]int32
	values []string
	plain  []byte
	last   int32 // index of the last value looked up; -1 for none
}

func newDictionary() *dictionary {
	return &dictionary{ids: make(map[string]int32), last: -1}
}

// id returns the index of b, adding it if new.
func (d *dictionary) id(b []byte) int32 {
	if d.last >= 0 && d.values[d.last] == string(b) {
		return d.last
	}
	id, ok := d.ids[string(b)]
	if !ok {
		s := string(b)
		id = int32(len(d.values))
		d.ids[s] = id
		d.values = append(d.values, s)
		d.plain = binary.LittleEndian.AppendUint32(d.plain, uint32(len(s)))
		d.plain = append(d.plain, s...)
	}
	d.last = id
	return id
}

// len returns the number of values.
func (d *dictionary) len() int { return len(d.values) }

// reset empties d for the next column chunk.
func (d *dictionary) reset() {
	clear(d.ids)
	clear(d.values)
	d.values, d.plain, d.last = d.values[:0], d.plain[:0], -1
}
