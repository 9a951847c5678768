package report

import (
	"fmt"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/internal/safe"
)

// MaxUnservedText is how many devices connected but not served the text
// names.
const MaxUnservedText = 3

// ServiceText says when an incident's devices had useful service again
// (docs/rules.md, "Time to first useful service"), beside when they
// reconnected; "" when none of them records the service stage.
func ServiceText(in *analyze.Incident) string {
	if in.ServiceDevices == 0 {
		return ""
	}
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	s := fmt.Sprintf("service: %d of %d record it; %d served again", in.ServiceDevices, in.DevicesLost, in.Served)
	if in.Served > 0 {
		s += fmt.Sprintf(", time to first useful service (from each device's own loss) p50 %v, p90 %v, max %v (to reconnect: p50 %v, p90 %v)",
			ms(in.TTS50), ms(in.TTS90), ms(in.TTSMax), ms(in.TTR50), ms(in.TTR90))
		s += estimateText(&in.TTS, "p50 to p90 are", "times to first useful service") + IncidentEstimateText(&in.TTR)
	}
	if n := len(in.Unserved); n > 0 {
		s += fmt.Sprintf("; %s connected but not served within %v:", plural(n, "device"), analyze.ServiceLag)
		for i, u := range in.Unserved[:min(n, MaxUnservedText)] {
			if i > 0 {
				s += ","
			}
			s += " " + safe.Text(u.Device) + " (" + UnservedText(in, &u) + ")"
		}
		if n > MaxUnservedText {
			s += fmt.Sprintf(" and %d more", n-MaxUnservedText)
		}
	}
	return s
}

// UnservedText says when a device connected but not served reconnected
// and was served: "connected 2s after the loss, served 40s after".
func UnservedText(in *analyze.Incident, u *analyze.Unserved) string {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	s := fmt.Sprintf("connected %v after the loss", ms(time.Duration(max(0, u.Reconnected-in.LostAt))))
	if u.Served == analyze.NoTime {
		return s + ", never served before its next loss or the end of the log"
	}
	return s + fmt.Sprintf(", served %v after", ms(time.Duration(max(0, u.Served-in.LostAt))))
}
