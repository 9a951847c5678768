package policy_test

import (
	"fmt"

	"github.com/stormaudit/stormaudit/policy"
)

func Example() {
	p, err := policy.Parse("fleet.toml", []byte(`
delay = "full_jitter"
base_delay_s = 1
multiplier = 2
max_delay_s = 120
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range []int64{0, 3, 10} {
		lo, hi := p.Bounds(a, 0)
		fmt.Printf("attempt %d: ceiling %g, draw in [%g, %g], u=0.5 draws %g\n", a, p.Ceiling(a), lo, hi, p.Draw(a, 0, 0.5))
	}
	// Output:
	// attempt 0: ceiling 1, draw in [0, 1], u=0.5 draws 0.5
	// attempt 3: ceiling 8, draw in [0, 8], u=0.5 draws 4
	// attempt 10: ceiling 120, draw in [0, 120], u=0.5 draws 60
}

func ExampleParse_error() {
	_, err := policy.Parse("fleet.toml", []byte(`
delay = "exponential"
base_delay_s = 1
multiplier = 2
max_delay_s = 0.5
`))
	fmt.Println(err)
	// Output:
	// fleet.toml:5: max_delay_s: expected at least base_delay_s (1), found 0.5
}

func ExamplePolicy_AppendTOML() {
	p, _ := policy.Preset("fixed")
	fmt.Printf("%s", p.AppendTOML(nil))
	// Output:
	// # A reconnect policy for stormaudit: the keys and delay rules are in
	// # docs/policy.md. Check it with: stormaudit policy check FILE
	// name = "fixed"         # free text, for reports
	// delay = "fixed"        # none, fixed, exponential, full_jitter, equal_jitter or decorrelated_jitter
	// base_delay_s = 5       # seconds: the ceiling at exponent 0; the delay of fixed
	// keepalive_s = 45       # seconds: the MQTT keepalive
	// clean_session = false  # the fleet's declared session kind
}
