// Package report renders the result of a check (an *analyze.Result) and
// one device's timeline for people and for machines. Rendering is a step
// of its own: every renderer reads the result and writes one document,
// and changes nothing.
//
// Times are RFC 3339 in UTC with as many fractional digits as they need
// (2026-11-30T14:17:35.05Z). A record is named by the input it was read
// from and its line (or CSV row), as the result's Sources name the inputs:
// "log.ndjson:12". Standard input, "-", is shown as "stdin". Callers that
// want paths relative to the working directory make Result.Sources so
// before rendering.
//
// # Text
//
// Text writes a report for a terminal or a CI log: what was checked and
// against which policy, the number of findings by rule and severity
// (rules without findings on one line, and the rules that were skipped,
// could not run, on another), then for each rule with findings,
// worst rule first, its worst findings with message, explanation and
// records (TextOptions.PerRule of them), the notes on what could not be
// checked, and the fleet's figures.
//
// # JSON
//
// JSON writes one document, version 2 (JSONVersion):
//
//	{"version": 2, "summary": {...}, "findings": [finding, ...]}
//
// the summary indented, then each finding on a line of its own, so that a
// fleet's worth of findings stays greppable and each thing is said once.
// A finding has rule, kind (rule/name: which of the rule's findings it
// is, stable when its message is reworded), severity ("error", "warning",
// "info"), device (a
// client_id, or "fleet"), start and end (RFC 3339), message, explanation
// and records. A record has source, an index into summary.sources, and
// line; and file, an index into summary.files (the dataset's Parquet
// files), and row (0-based) when Result.Files names the file. The summary
// has dataset (when set), sources (the inputs as given, "-" for stdin),
// files, devices, records, rejected (lines rejected at ingest), findings,
// by_rule (every rule that ran, zeros included), by_severity (all three),
// policy (source "declared", "inferred" or "none"; name; the inferred
// keys; the policy's keys and values), fleet (the fleet's figures,
// durations in seconds), notes, skipped (rule and reason of each rule
// that could not run, so neither passed nor failed: a policy key it needs
// is neither declared nor inferred, or what it judges against is absent)
// and rules (id, severity, title, help of every rule in the check). Version 1 repeated each record's input and file
// names in every record, indented, at twice the size.
//
// # SARIF
//
// SARIF writes a SARIF 2.1.0 log that GitHub code scanning accepts, with
// one run. The driver, "stormaudit" with SARIFOptions.Version and
// informationUri InformationURI, lists every rule that ran (id; a
// CamelCase name when it differs from the id in more than case;
// shortDescription from the title; fullDescription and help from the
// help text; helpUri the rule's section of docs/rules.md, RulesURI#id;
// defaultConfiguration.level). Each finding is a
// result with ruleId, ruleIndex, level (error, warning, or note for info),
// message.text (message, a blank line, explanation), and one location: the
// input and line of the finding's first record as artifactLocation and
// region.startLine, with the device as a logical location of kind
// "object". Its other records are relatedLocations (without a message:
// the location says it). Each result is written on one line, with the
// finding's device, start, end, severity and kind in its properties. A
// finding without records is placed at line 1 of the first input, since
// code scanning rejects a file holding any result without a physical
// location.
//
// An input within the repository is located relative to the repository's
// root, with uriBaseId "%SRCROOT%" (SrcRoot), which the run's
// originalUriBaseIds gives as a file URI: the root is the nearest
// directory up from the working directory with a .git (SourceRoot), or
// the working directory outside a repository (SARIFOptions.Root and
// WorkDir say otherwise), so "../logs/x.ndjson" given in the root's ci/
// is "logs/x.ndjson". An input outside the root is an absolute file URI,
// and standard input is "stdin". Paths are cleaned and percent-encoded.
//
// partialFingerprints["stormauditFinding/v3"] (FingerprintKey) is a hash
// of the finding's rule, its kind (analyze.Finding.Kind, a stable key
// such as "delay-bounds/ceiling-mismatch"), its device and its start (the
// time of its first record), with an ordinal for findings that share all
// four, so that a finding keeps its alert from one run to the next
// however the input is named (f.ndjson or ./f.ndjson), wherever its lines
// move and however its message is worded. (v1 hashed the input as typed
// and the line, so a moved line changed every fingerprint; v2 hashed the
// shape of the message, its words without its numbers, in place of the
// kind, so a reworded message did.) The invocation records
// SARIFOptions.ExitCode, and the summary's notes as notifications. With
// SARIFOptions.MaxResults the results are the worst findings only, and a
// notification (level warning) says how many of each severity were left
// out: GitHub code scanning keeps 25,000 results of a run at most, and of
// a larger run the 5,000 worst.
//
// # Baselines
//
// WriteBaseline writes the findings a fleet accepts, a JSON document of
// version 1 whose fingerprint is FingerprintKey, with each finding's
// fingerprint (the SARIF one), rule, kind, severity, device, start and
// message; Baseline.Filter drops from a result the findings it lists.
// ReadBaseline also reads a baseline written with fingerprints v2
// (FingerprintKeyV2, no kinds) and matches findings by their v2
// fingerprints; Baseline.Version says "v2", for the caller to say that
// writing it again gives v3.
//
// # JUnit
//
// JUnit writes a JUnit XML report: one testsuite per rule that ran, named
// by its id. Each device with findings of the rule is a testcase named by
// its client_id (classname the rule id); it fails when one of them is at
// or above JUnitOptions.FailOn, and otherwise passes with the findings in
// its system-out. The devices without findings pass: one testcase each
// when JUnitOptions.Devices lists them, or else one testcase named
// "N other devices", so that a dashboard shows every rule, passing ones
// included, without a fleet of 50,000 devices making 750,000 testcases.
// Findings about the whole fleet are the testcase "fleet". The testcases
// of a rule that could not run (summary.skipped in JSON) are skipped,
// <skipped message="why"/>, not passed. The tests,
// failures, errors and skipped counts of every suite and of the report
// are those of its testcases.
//
// # GitHub annotations
//
// GitHub writes workflow commands that GitHub Actions shows as
// annotations: "::error file=F,line=N,title=T::MESSAGE", with warning for
// warnings and notice for info, worst first. A finding that rests on lines
// that are no records (Ref.Row < 0: lines rejected at ingest) annotates
// each of them, five at most. Messages escape %, CR and LF;
// properties also escape ":" and ",". At most limit findings are
// annotated (DefaultGitHubMax unless told: GitHub shows 10 annotations of
// each level for a step); one notice then says how many more there are,
// by severity.
//
// # Timelines
//
// TimelineText writes one device's timeline as a table, one line per
// record in the device's own order (time, outcome, attempt, delay, the
// derived socket-open of a backoff_wait, input and line), then its
// sessions and outages. TimelineJSON writes it as one JSON document.
//
// # Example
//
//	res, err := analyze.Check("incident.ds", analyze.Options{})
//	if err != nil {
//		return err
//	}
//	code := 0
//	if res.Worst() >= analyze.Error {
//		code = 1
//	}
//	report.Text(os.Stdout, res, report.TextOptions{})
//	f, err := os.Create("check.sarif")
//	...
//	err = report.SARIF(f, res, report.SARIFOptions{ExitCode: code})
package report
