// Package near finds the known name a mistyped one most likely meant.
package near

// Nearest returns the candidate closest to s in edit distance, if it is
// close enough to be what was meant (at most a third of its length, and
// at least 1, edits away, and fewer edits than s has bytes), else "".
func Nearest(s string, candidates []string) string {
	best, bestD := "", max(1, len(s)/3)+1
	for _, c := range candidates {
		if d := Distance(s, c); d < bestD && d < len(s) {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes,
// counting a swap of adjacent bytes as one edit.
func Distance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
