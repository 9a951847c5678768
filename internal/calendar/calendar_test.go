package calendar

import (
	"testing"
	"time"
)

func TestDaysIn(t *testing.T) {
	tests := []struct{ year, month, want int }{
		{2026, 1, 31}, {2026, 2, 28}, {2026, 4, 30}, {2026, 12, 31},
		{2024, 2, 29}, {2000, 2, 29}, {1900, 2, 28}, {2100, 2, 28}, {1600, 2, 29},
	}
	for _, tt := range tests {
		if got := DaysIn(tt.year, tt.month); got != tt.want {
			t.Errorf("DaysIn(%d, %d) = %d, want %d", tt.year, tt.month, got, tt.want)
		}
	}
}

// TestDaysInAsTime: DaysIn agrees with package time over the years the
// parsers read, and more.
func TestDaysInAsTime(t *testing.T) {
	for year := 1600; year <= 2400; year++ {
		for month := 1; month <= 12; month++ {
			want := time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
			if got := DaysIn(year, month); got != want {
				t.Fatalf("DaysIn(%d, %d) = %d, package time says %d", year, month, got, want)
			}
		}
	}
}
