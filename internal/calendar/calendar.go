// Package calendar knows the proleptic Gregorian calendar, as package time
// does, for the date parsers that check a date without building a
// time.Time: the record timestamps of auditfmt and the broker log stamps
// of brokerlog.
package calendar

// DaysIn returns the number of days in month (1 to 12) of year: 28 or 29
// in February, as year is a leap year or not, 30 or 31 in the others.
func DaysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
