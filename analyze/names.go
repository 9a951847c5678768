package analyze

import (
	"fmt"
	"slices"
)

// A partial names its devices by ordinal, and holds every device's id
// (fleetCounter.Names) for the findings that name them. Once the
// incidents and resync's fires have gone apart (they carry the ids they
// need, or their ordinals), the finishing step needs the ids of only the
// few devices a finding will name: starvation's, those of the fires
// KeepFires kept, and those with a clock offset (each part's Detail names
// its own, PutIncidents puts them). So a distributed driver need not ship every id to it:
// Partial.TakeNames takes them out of each partial, keeping those of the
// devices the partial still names; Split.Wanted says which devices the
// kept fires of a shard name, by part; Split.Name gives those of one
// part's ids, and Partial.PutNames puts them into the partial of that
// part before Finish, which refuses to name a device whose id is
// missing. starvation's recovered devices carry their own ids
// (TakeRecovered), and the fleet's ids, while there are at most MaxIDs,
// go with the figures (TakeFigures).

// namesPart is what TakeNames encodes, and namedPart what Name does:
// the ids of one part's devices, every one or those asked for.
type namesPart struct {
	Part int
	IDs  []string // by ordinal
}

type namedPart struct {
	Part int
	Devs []int32 // ordinals in the part
	IDs  []string
}

// wantedPart is what Wanted encodes: the devices of one part whose ids
// the finishing step needs.
type wantedPart struct {
	Part int
	Devs []int32
}

// TakeNames removes the device ids from the partial, keeping those of
// the devices it still names (starvation's), and returns them all,
// encoded; nil, and the partial keeps them, while its incidents or
// resync's fires are in it (TakeIncidents, TakeFires): they name every
// device. Take the figures first (TakeFigures): they carry the ids of a
// small fleet.
func (p *Partial) TakeNames() ([]byte, error) {
	fc := p.k.fc
	if !p.incidentsTaken || p.resync() != nil && !p.firesTaken || fc.NamesTaken {
		return nil, nil
	}
	if !p.figuresTaken {
		return nil, fmt.Errorf("partial of part %d: device ids taken before its figures (TakeFigures)", p.part)
	}
	b, err := encode(&namesPart{Part: p.part, IDs: fc.Names})
	if err != nil {
		return nil, fmt.Errorf("partial of part %d: device ids: %w", p.part, err)
	}
	if fc.Named == nil {
		fc.Named = map[int32]string{} // it may hold clock offsets' ids already (PutIncidents)
	}
	if r := p.starvation(); r != nil {
		for _, d := range r.Devs {
			fc.Named[d.Dev] = fc.Names[d.Dev]
		}
	}
	fc.Names, fc.NamesTaken = nil, true
	return b, nil
}

// Wanted returns, by part, the devices whose ids the fires that
// KeepFires kept of a shard name, encoded for Name.
func (s *Split) Wanted(kept []byte) (map[int][]byte, error) {
	if len(kept) == 0 {
		return nil, nil
	}
	_, fs, err := readFires(kept)
	if err != nil {
		return nil, err
	}
	byPart := map[int][]int32{}
	for _, f := range fs {
		byPart[f.part] = append(byPart[f.part], f.f.Dev)
	}
	out := map[int][]byte{}
	for part, devs := range byPart {
		slices.Sort(devs)
		if out[part], err = encode(&wantedPart{Part: part, Devs: slices.Compact(devs)}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Name returns the ids, of those TakeNames took of one part, of the
// devices that wants (Wanted, of that part) name, encoded for PutNames.
func (s *Split) Name(names []byte, wants [][]byte) ([]byte, error) {
	var np namesPart
	if err := decode(names, &np); err != nil {
		return nil, fmt.Errorf("%s: device ids: %w", s.dir, err)
	}
	out := namedPart{Part: np.Part}
	for _, b := range wants {
		var w wantedPart
		if err := decode(b, &w); err != nil {
			return nil, fmt.Errorf("%s: devices wanted: %w", s.dir, err)
		}
		if w.Part != np.Part {
			return nil, fmt.Errorf("%s: devices of part %d wanted of the ids of part %d", s.dir, w.Part, np.Part)
		}
		out.Devs = append(out.Devs, w.Devs...)
	}
	slices.Sort(out.Devs)
	out.Devs = slices.Compact(out.Devs)
	for _, d := range out.Devs {
		if d < 0 || int(d) >= len(np.IDs) {
			return nil, fmt.Errorf("%s: the id of device %d of part %d wanted, which has %d", s.dir, d, np.Part, len(np.IDs))
		}
		out.IDs = append(out.IDs, np.IDs[d])
	}
	return encode(&out)
}

// PutNames puts ids that Name returned into the partial of their part.
func (p *Partial) PutNames(b []byte) error {
	fc := p.k.fc
	if !fc.NamesTaken {
		return fmt.Errorf("partial of part %d: its device ids were not taken", p.part)
	}
	var n namedPart
	if err := decode(b, &n); err != nil {
		return fmt.Errorf("partial of part %d: device ids: %w", p.part, err)
	}
	if n.Part != p.part || len(n.IDs) != len(n.Devs) {
		return fmt.Errorf("partial of part %d: %d ids of %d devices of part %d", p.part, len(n.IDs), len(n.Devs), n.Part)
	}
	for i, d := range n.Devs {
		if d < 0 || int64(d) >= int64(fc.St.Devices) {
			return fmt.Errorf("partial of part %d: the id of device %d of %d", p.part, d, fc.St.Devices)
		}
		fc.Named[d] = n.IDs[i]
	}
	return nil
}

// namesHeld reports an error unless the merged check holds the id of
// every device its findings can name, once the ids were taken apart.
func (k *checker) namesHeld() error {
	fc := k.fc
	if !fc.NamesTaken {
		return nil
	}
	held := func(what string, dev int32) error {
		if _, ok := fc.Named[dev]; !ok {
			return fmt.Errorf("the id of device %d, which %s names, was not put back", dev, what)
		}
		return nil
	}
	if r := ruleOf[*starvation](k); r != nil {
		for _, d := range r.Devs {
			if err := held("starvation (TakeNames, PutRecovered)", d.Dev); err != nil {
				return err
			}
		}
	}
	if inf := fc.Inc.Inferred; inf != nil {
		for _, w := range inf.Offsets {
			if err := held("a clock offset (Detail, PutIncidents)", w.Dev); err != nil {
				return err
			}
		}
	}
	if r := k.resync(); r != nil {
		for a := range r.Fires {
			for _, f := range r.Fires[a] {
				if err := held("a kept resync fire (Wanted, Name, PutNames)", f.Dev); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
