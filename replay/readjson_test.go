package replay

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestReadJSON reads back what WriteJSON wrote, one report and a
// comparison, and names the line of what it cannot read.
func TestReadJSON(t *testing.T) {
	a := &Report{Plan: "recorded", Broker: "embedded", Devices: 3, BrokerDid: BrokerDid{RefusedByCode: map[string]int{"0x9f": 2}}}
	b := &Report{Plan: "what-if (full-jitter)", Broker: "embedded", Devices: 3, BrokerDid: BrokerDid{RefusedByCode: map[string]int{}}}
	for _, reps := range [][]*Report{{a}, {a, b}} {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, reps...); err != nil {
			t.Fatal(err)
		}
		got, err := ReadJSON(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, reps) {
			t.Errorf("read back %+v, wrote %+v", got, reps)
		}
	}
	for in, want := range map[string]string{
		"{\n  \"plan\": \"x\",\n  \"devices\": \"many\"\n}\n": "line 3: json: cannot unmarshal string",
		"{\n  \"plan\": \"x\",\n  \"speeed\": 1\n}\n":         `line 3: json: unknown field "speeed"`,
		"{\"plan\": \"x\",\n\n \"x":                           "line 3: unexpected EOF",
		"{\"devices\": 3}":                                    "it has no plan",
		"{\"plan\": \"x\"} {}":                                "more than one JSON value",
	} {
		_, err := ReadJSON(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadJSON(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

// TestWriteTextWaves: the text report draws each replay's connect and
// redelivery waves on one axis, a column a second up to 60 columns, and
// a wave's peak is a full block.
func TestWriteTextWaves(t *testing.T) {
	r := &Report{Plan: "recorded", Redelivery: Redelivery{Queued: 2, Waves: &Waves{Connects: []int{0, 8, 1, 0}, Redelivered: []int{0, 0, 16, 2}}}}
	var buf bytes.Buffer
	if err := WriteText(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"waves, 1 s a column from the start (a full block: 8 connects, 16 messages)", "    connects      █▁\n", "    redelivered    █▁\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the text report has no %q:\n%s", want, buf.String())
		}
	}
	if got := columns(make([]int, 130), 3); len(got) != 44 {
		t.Errorf("130 seconds at 3 a column: %d columns", len(got))
	}
}
