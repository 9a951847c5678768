package ingest

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// The write of a dataset is split by client id into partitions that are
// merged, linked and written to Parquet files in parallel: a device's
// records, and so its chain, are all in one partition, and the
// partitions' files, in order, are the dataset in order.

// splitKey is a place in dataset order: a bucket (0 without buckets) and
// a client id. A partition holds the records from its lower key up to,
// not including, the next partition's.
type splitKey struct {
	bucket uint32
	id     string
}

// compare compares k with the key of a record in bucket with id.
func (k *splitKey) compare(bucket uint32, id string) int {
	if c := cmp.Compare(k.bucket, bucket); c != 0 {
		return c
	}
	return cmp.Compare(k.id, id)
}

func (k splitKey) compareKey(l splitKey) int { return k.compare(l.bucket, l.id) }

// keyAt returns the key of the n-th record of b in sorted order.
func (b *encoded) keyAt(n int) splitKey {
	rec := b.record(int(b.keys[n].i))
	l, w := binary.Uvarint(rec) // the client id comes first
	return splitKey{bucket: b.keys[n].bucket, id: string(rec[w : w+int(l)])}
}

// lowerBound returns the place in sorted order of b's first record at
// or above lo.
func (b *encoded) lowerBound(lo splitKey) int {
	i, j := 0, len(b.keys)
	for i < j {
		h := int(uint(i+j) >> 1)
		if k := b.keyAt(h); k.compareKey(lo) < 0 {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// partitionRows is the fewest records a partition is given
// (Options.partitionRows): below twice as many, the write is one
// partition.
const partitionRows = 1 << 18

// splits returns the lower keys of the partitions after the first, at
// most min(n, most)-1 of them, chosen from the marks of the runs and of
// the chunk in memory so that the partitions hold about as many records
// each.
func (s *sorter) splits(n int, most int64) []splitKey {
	n = int(min(int64(n), most))
	if n < 2 {
		return nil
	}
	var samples []splitKey
	for _, run := range s.runs {
		for _, m := range run.marks {
			samples = append(samples, m.key)
		}
	}
	samples = append(samples, s.prefixMarks...)
	for i := 0; i < s.chunk.len(); i += markEvery {
		samples = append(samples, s.chunk.keyAt(i))
	}
	slices.SortFunc(samples, splitKey.compareKey)
	var keys []splitKey
	for p := 1; p < n; p++ {
		k := samples[p*len(samples)/n]
		if len(keys) == 0 || keys[len(keys)-1].compareKey(k) < 0 {
			keys = append(keys, k)
		}
	}
	return keys
}
