package front

import (
	"slices"
	"testing"
)

func TestParseOutputs(t *testing.T) {
	beam := []string{"text", "json", "sarif"}
	for _, tt := range []struct {
		formats, outputs string
		known            []string
		want             []Output
		err              string
	}{
		{"", "", Formats, []Output{{"text", "-"}}, ""},
		{"json", "", Formats, []Output{{"json", "-"}}, ""},
		{"text, sarif", "-, out.sarif", Formats, []Output{{"text", "-"}, {"sarif", "out.sarif"}}, ""},
		{"sarif,junit", "a.sarif,b.xml", Formats, []Output{{"sarif", "a.sarif"}, {"junit", "b.xml"}}, ""},
		{"xml", "", Formats, nil, `check: --format: expected text, json, sarif, junit or github, found "xml"`},
		{"junit", "", beam, nil, `check: --format: expected text, json or sarif, found "junit"`},
		{"text,json", "", Formats, nil, "check: --output: text and json both go to stdout; give --output a file for all but one"},
		{"text,json", "a", Formats, nil, "check: --output: expected one path per format (2), found 1"},
		{"json,sarif", "a,a", Formats, nil, "check: --output: a is given twice"},
		// one file by two names: both formats would be written to it
		{"json,sarif", "a.json,./a.json", beam, nil, "check: --output: ./a.json is given twice"},
		{"json,sarif", "d/../a.json,a.json", Formats, nil, "check: --output: a.json is given twice"},
	} {
		got, err := ParseOutputs(tt.formats, tt.outputs, tt.known)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseOutputs(%q, %q): err %v, want %s", tt.formats, tt.outputs, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseOutputs(%q, %q) = %v, %v; want %v", tt.formats, tt.outputs, got, err, tt.want)
		}
	}
}
