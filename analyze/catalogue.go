package analyze

// catalogue makes the rules, one fresh instance each, in the order of
// docs/rules.md (its table and its sections): the order of a result's
// rules, of the notes and skips, and of the rules a partial encodes.
// A rule is in the catalogue only by being listed here; a new rule is
// added here, in docs/rules.md at the same place, and with its
// positive and negative logs under testdata/rules/ID, each positive log
// with the findings it must give in NAME.findings
// (TestRuleLogs, TestCatalogueOrderIsDocOrder).
var catalogue = []func() Rule{
	func() Rule { return newResync() },
	func() Rule { return &delayBounds{} },
	func() Rule { return &resetWithoutConnack{} },
	func() Rule { return &spacingRule{} },
	func() Rule { return &budgetRule{} },
	func() Rule { return &capacityRule{} },
	func() Rule { return &starvation{floor: StarveFloor} },
	func() Rule { return &silentGiveUp{grace: GiveUpGrace} },
	func() Rule { return &authBackoff{} },
	func() Rule {
		return &reconnectWhileConnected{flaps: flappingRule{max: flappingMax, window: flappingWindow, ban: flappingBan}}
	},
	func() Rule { return &sessionSettings{} },
	func() Rule { return &clientIDChurn{} },
	func() Rule { return &hotLoop{delay: hotDelay, run: hotRun, opens: hotOpens, span: hotSpan} },
	func() Rule { return &clockAnomaly{} },
	func() Rule { return &auditGap{} },
	func() Rule { return &unscheduledConnect{} },
	func() Rule { return &recoveryStorm{} },
	func() Rule { return &startupStorm{defaultSpread: DefaultStartupSpread.Seconds()} },
	func() Rule { return &overlappingAttempts{ids: map[stageKey]*inFlight{}} },
	func() Rule { return &backlog{} },
	func() Rule { return newRedelivery() },
	func() Rule { return &secretInLog{} },
	// the rules that need the broker's log (RuleInfo.NeedsBrokerLog)
	func() Rule { return &unauditedConnect{} },
	func() Rule { return &unseenConnect{} },
	func() Rule { return &sessionTakeover{} },
	func() Rule { return &presenceRule{} },
}

// Rules returns a fresh instance of every rule, in catalogue order.
func Rules() []Rule {
	rs := make([]Rule, 0, len(catalogue))
	for _, mk := range catalogue {
		rs = append(rs, mk())
	}
	return rs
}
