package afteraction

import (
	"fmt"
	"reflect"

	"github.com/stormaudit/stormaudit/redact"
)

// redactPage replaces, in every text of pg (the charts' SVG included),
// what package redact finds by value (MAC addresses, bearer tokens, PEM
// blocks, JWTs, URL passwords) with red's pseudonyms, and lists on the
// page what it replaced. The page shows no record member by its key (the
// records' extra and envelope are not on it), so the key rule has nothing
// to judge here; export --redact applies it to the records.
func redactPage(pg *page, red *redact.Redactor) {
	redactValue(reflect.ValueOf(pg).Elem(), red)
	pg.RedactOn = true
	for _, c := range red.Replaced() {
		field := c.Field
		if field == "" {
			field = "page text"
		}
		pg.Redacted = append(pg.Redacted, kv{K: field, V: fmt.Sprintf("%d × %s", c.Values, c.Kind)})
	}
}

// redactValue redacts every string reachable from v that can be set.
func redactValue(v reflect.Value, red *redact.Redactor) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(red.Text(v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			redactValue(v.Elem(), red)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				redactValue(v.Field(i), red)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			redactValue(v.Index(i), red)
		}
	}
}
