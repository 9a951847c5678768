package jsonstr_test

import (
	"fmt"
	"strings"

	"github.com/stormaudit/stormaudit/internal/jsonstr"
)

func ExampleScan() {
	line := `{"client_id":"caf\u00e9 \ud83d\ude00","extra":"\ud800"}`
	i := strings.Index(line, `:"`) + 1 // the value's opening quote
	end, escaped, err := jsonstr.Scan(line, i, jsonstr.UTF8)
	fmt.Println(end, escaped, err)
	fmt.Printf("%q\n", jsonstr.AppendUnescaped(nil, line[i+1:end-1]))

	// A lone surrogate unescapes to U+FFFD, unless Scan rejects it.
	i = strings.LastIndex(line, `:"`) + 1
	end, _, _ = jsonstr.Scan(line, i, 0)
	fmt.Printf("%q\n", jsonstr.AppendUnescaped(nil, line[i+1:end-1]))
	_, _, err = jsonstr.Scan(line, i, jsonstr.NoLoneSurrogates)
	fmt.Printf("%v at byte %d\n", err.Kind, err.Offset+1)
	// Output:
	// 37 true <nil>
	// "café 😀"
	// "�"
	// a surrogate that is not half of a pair at byte 48
}
