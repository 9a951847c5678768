package main

import (
	"regexp"
	"strings"

	"github.com/urfave/cli/v3"
)

// examples are each command's examples, by its full name without the
// program's: shown at the end of its help. TestExamples runs every one
// through the command's flag parser.
var examples = map[string][]string{
	"ingest": {
		"stormaudit ingest -o incident.ds gw-a.ndjson gw-b.csv.gz",
		"stormaudit ingest --key keys/collector-1.key --log stormaudit.test/incident -o incident.ds gw-a.ndjson",
		"zcat logs/*.ndjson.gz | stormaudit ingest --strict -o incident.ds -",
		"stormaudit ingest --buckets 64 -o quarter.ds logs/*.ndjson.gz",
	},
	"verify": {
		"stormaudit verify incident.ds",
		"stormaudit verify --verifier keys/collector-1.pub --log stormaudit.test/incident incident.ds",
		"stormaudit verify --since old.checkpoint --format json incident.ds",
		"stormaudit verify --proof dev2.proof --verifier keys/collector-1.pub",
	},
	"prove": {
		"stormaudit prove --device dev-0002 --seq 1 -o dev2.proof incident.ds",
		"stormaudit prove --origin stormaudit.test/incident/dev-0002 --seq 1 incident.ds",
	},
	"keygen": {"stormaudit keygen --name collector-1 --out keys"},
	"export": {
		"stormaudit export --format ndjson -o incident.ndjson incident.ds",
		"stormaudit export --format arrow -o incident.arrow incident.ds",
	},
	"simulate": {
		"stormaudit simulate --devices 2000 --policy fixed --dataset fixed.ds",
		"stormaudit simulate --devices 500 --policy full-jitter --capacity 100/s -o sim.ndjson",
	},
	"replay": {
		"stormaudit replay incident.ds",
		"stormaudit replay --policy full-jitter --compare --format json incident.ds",
		"stormaudit replay --broker mqtt://localhost:1883 --speed 10 gw-a.ndjson",
	},
	"demo": {"stormaudit demo", "stormaudit demo --dir demo-out"},
	"check": {
		"stormaudit check gw-a.ndjson",
		"stormaudit check --policy fleet.toml --format text,sarif --output -,check.sarif incident.ds",
		"stormaudit check --baseline stormaudit-baseline.json --fail-on warning logs.ndjson",
	},
	"rules":    {"stormaudit rules", "stormaudit rules --format json"},
	"timeline": {"stormaudit timeline --device dev-0002 incident.ds", "stormaudit timeline -d dev-0002 --format json gw-a.ndjson"},
	"report": {
		"stormaudit report -o incident.html incident.ds",
		"stormaudit report --verifier keys/collector-1.pub --policy full-jitter -o incident.html incident.ds",
		"stormaudit report --replay replay.json -o incident.html gw-a.ndjson gw-b.csv.gz",
	},
	"browse":       {"stormaudit browse incident.ds", "stormaudit browse --policy full-jitter gw-a.ndjson"},
	"policy list":  {"stormaudit policy list"},
	"policy show":  {"stormaudit policy show full-jitter > fleet.toml", "stormaudit policy show --format json fleet.toml"},
	"policy check": {"stormaudit policy check fleet.toml"},
	"config show":  {"stormaudit config show", "stormaudit --config ci/stormaudit.toml config show"},
}

// document adds to the help of the subcommands of cmd (named prefix)
// their examples, and marks their required flags.
func document(cmd *cli.Command, prefix string) {
	for _, c := range cmd.Commands {
		name := strings.TrimSpace(prefix + " " + c.Name)
		c.Description = addExamples(c.Description, examples[name])
		markRequired(c)
		document(c, name)
	}
}

func addExamples(desc string, ex []string) string {
	if len(ex) == 0 {
		return desc
	}
	if desc != "" {
		desc += "\n\n"
	}
	return desc + "Examples:\n  " + strings.Join(ex, "\n  ")
}

// markRequired appends "(required)" to the usage of cmd's required flags.
func markRequired(cmd *cli.Command) {
	for _, f := range cmd.Flags {
		if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() {
			switch sf := f.(type) {
			case *cli.StringFlag:
				sf.Usage += " (required)"
			case *cli.Int64Flag:
				sf.Usage += " (required)"
			}
		}
	}
}

var requiredErr = regexp.MustCompile(`^Required flags? "([^"]+)" not set$`)

// requiredText rewrites urfave/cli's error for a missing required flag
// in the words of the rest of the program's errors.
func requiredText(msg string) string {
	m := requiredErr.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	var names []string
	for _, n := range strings.Split(m[1], ", ") {
		names = append(names, flagText(n))
	}
	verb := " is"
	if len(names) > 1 {
		verb = " are"
	}
	return strings.Join(names, " and ") + verb + " required (the command's --help shows examples)"
}
