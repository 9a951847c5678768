package dataset

import (
	"fmt"
	"strconv"
)

// MaxBuckets is the most buckets a dataset may be partitioned into.
const MaxBuckets = 1 << 16

// Bucket returns the bucket of n (n >= 1) that a client id belongs to in
// a bucketed dataset: the 32-bit FNV-1a hash of its UTF-8 bytes, modulo
// n. It is stable (any engine can compute it: Spark, Trino, Beam) and
// puts every record of a device in one bucket, so buckets can be
// analysed independently. n <= 0 puts everything in bucket 0.
func Bucket(clientID string, n int) int { return bucketOf(clientID, n) }

// BucketBytes is Bucket of a client id given as bytes.
func BucketBytes(clientID []byte, n int) int { return bucketOf(clientID, n) }

func bucketOf[S string | []byte](id S, n int) int {
	if n <= 1 {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h ^= uint32(id[i])
		h *= 16777619
	}
	return int(h % uint32(n))
}

// BucketDir returns the Hive-style directory of bucket b of n:
// "bucket=007", zero-padded to the width of n-1 and at least 3 digits,
// so that the directories sort in bucket order.
func BucketDir(b, n int) string {
	w := max(3, len(strconv.Itoa(n-1)))
	return fmt.Sprintf("bucket=%0*d", w, b)
}
