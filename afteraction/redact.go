package afteraction

import (
	"fmt"
	"html/template"
	"reflect"
	"strings"

	"github.com/stormaudit/stormaudit/internal/safe"

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
	eachString(v, true, red.Text)
}

// eachString replaces every string s reachable from v that can be set
// with fn(s); the page's HTML (its charts' SVG) too when html is set.
func eachString(v reflect.Value, html bool, fn func(string) string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() && (html || v.Type() != htmlType) {
			v.SetString(fn(v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			eachString(v.Elem(), html, fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				eachString(v.Field(i), html, fn)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			eachString(v.Index(i), html, fn)
		}
	}
}

var htmlType = reflect.TypeOf(template.HTML(""))

// escapePage shows the control and bidirectional characters of every
// text of pg visibly, as every other output does (safe.Text, line by
// line): html/template escapes markup, not ESC, BEL or U+202E, which a
// terminal obeys (cat report.html) and a page uses to spoof a name. The
// charts' SVG is built from escaped labels.
func escapePage(pg *page) {
	eachString(reflect.ValueOf(pg).Elem(), false, func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = safe.Text(l)
		}
		return strings.Join(lines, "\n")
	})
}
