package analyze

import "github.com/stormaudit/stormaudit/auditfmt"

// The diagnoses of an incident (Incident.Diagnosis): what its devices met
// while down, from their own records, stage by stage (docs/rules.md,
// "What the devices met").
const (
	// DiagLink: the link stage failed: a dead access point, tower or path.
	DiagLink = "link-down"
	// DiagAddress: the link did not fail, the address stage (DHCP, DNS)
	// did.
	DiagAddress = "address-failed"
	// DiagRefused: the broker answered and refused: CONNACK refusals are
	// at least as many as the session's failed connects. The network was
	// up; its service was not.
	DiagRefused = "refused"
	// DiagNoAnswer: the session's connects failed (nothing answered, or
	// the socket was refused or reset) more often than the broker refused
	// them: a dead broker, or a dead path the devices do not record.
	DiagNoAnswer = "no-answer"
	// DiagNothingFailed: no attempt failed or was refused: the devices
	// noticed the loss and their attempts connected (or were still under
	// way at the end of the log).
	DiagNothingFailed = "nothing-failed"
)

// Diagnose returns the diagnosis of in from its Stages: the first of the
// link and address stages whose attempts failed on at least a tenth of
// its devices (every stage comes up again at the recovery, so what
// failed first is what stopped them), else what the session met.
func Diagnose(in *Incident) string {
	need := max(1, (in.DevicesLost+9)/10)
	for _, st := range []auditfmt.Stage{auditfmt.StageLink, auditfmt.StageAddress} {
		if in.FailedDevices(st) >= need {
			if st == auditfmt.StageLink {
				return DiagLink
			}
			return DiagAddress
		}
	}
	refused := in.StageRecords(auditfmt.StageSession, auditfmt.Refused)
	failed := in.StageRecords(auditfmt.StageSession, auditfmt.AttemptFailed)
	switch {
	case refused > 0 && refused >= failed:
		return DiagRefused
	case failed > 0 || refused > 0:
		return DiagNoAnswer
	}
	return DiagNothingFailed
}

// FailedDevices returns the most devices of stage st with a failed or a
// refused attempt (a lower bound of those with either).
func (in *Incident) FailedDevices(st auditfmt.Stage) int {
	n := 0
	for _, o := range []auditfmt.Outcome{auditfmt.AttemptFailed, auditfmt.Refused} {
		if so := in.StageOutcome(st, o); so != nil {
			n = max(n, so.Devices)
		}
	}
	return n
}

// StageRecords returns the records of stage st with outcome o that the
// incident's devices wrote while down.
func (in *Incident) StageRecords(st auditfmt.Stage, o auditfmt.Outcome) int {
	if so := in.StageOutcome(st, o); so != nil {
		return so.Records
	}
	return 0
}

// StageOutcome returns the count of stage st's outcome o, nil if none.
func (in *Incident) StageOutcome(st auditfmt.Stage, o auditfmt.Outcome) *StageOutcome {
	for i := range in.Stages {
		if in.Stages[i].Stage == st && in.Stages[i].Outcome == o {
			return &in.Stages[i]
		}
	}
	return nil
}

// Failures returns the failed and refused attempts of stage st.
func (in *Incident) Failures(st auditfmt.Stage) int {
	return in.StageRecords(st, auditfmt.AttemptFailed) + in.StageRecords(st, auditfmt.Refused)
}
