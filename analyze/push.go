package analyze

import "slices"

// push appends v to s, doubling s's room when it is full. append grows a
// large slice by about a quarter at a time, so a list that grows to n
// over a whole fleet (resync's timer fires, recovery_storm's losses, the
// findings) is copied about four times n over and its new memory cleared
// each time; doubling copies it about once.
func push[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 16))
	}
	return append(s, v)
}
