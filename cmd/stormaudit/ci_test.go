package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// ciDir holds the CI recipes docs/ci.md quotes.
var ciDir = filepath.Join("..", "..", "docs", "ci")

// ciCase is what a recipe meets: audit logs in audit/ of the repository,
// and the exit status check gives for them at --fail-on error.
type ciCase struct {
	name   string
	log    string // the log to put in audit/fleet.ndjson; none when ""
	status int
}

// ciCases simulates the logs of TestCIRecipes: a fleet with full jitter
// (no findings), the same fleet on a fixed timer (an error finding) and
// no logs at all (an input error).
func ciCases(t *testing.T) []ciCase {
	t.Helper()
	dir := t.TempDir()
	quiet, storm := filepath.Join(dir, "quiet.ndjson"), filepath.Join(dir, "storm.ndjson")
	for _, args := range [][]string{
		{"simulate", "--devices", "20", "--outage", "10s", "-o", quiet},
		{"simulate", "--devices", "20", "--outage", "10s", "--policy", "fixed", "-o", storm},
	} {
		if code, _, stderr := runArgs(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
	}
	return []ciCase{{"quiet", quiet, 0}, {"storm", storm, 1}, {"no logs", "", 2}}
}

// repo makes the working directory of a CI job that meets c.
func (c ciCase) repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if c.log == "" {
		return dir
	}
	b, err := os.ReadFile(c.log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "audit"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit", "fleet.ndjson"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCIRecipes: the recipes of docs/ci.md are files under docs/ci that
// the page quotes as they are; the YAML parses into the keys each CI
// reads; and every step that runs stormaudit runs as its CI would run it
// (in order, in its shell, stopping at the first failure), against the
// stormaudit this test binary is, ending with the exit status and the
// reports the recipe promises. Only installing stormaudit and uploading
// to GitHub are not run.
func TestCIRecipes(t *testing.T) {
	if _, err := exec.LookPath("stormaudit"); err != nil {
		t.Fatalf("no stormaudit in PATH (TestMain puts this test binary there): %v", err)
	}
	cases := ciCases(t)
	t.Run("quoted", testCIQuoted)
	t.Run("github", func(t *testing.T) { testCIGitHub(t, cases) })
	t.Run("gitlab", func(t *testing.T) { testCIGitLab(t, cases) })
	t.Run("shell", func(t *testing.T) { testCIShell(t, cases) })
	t.Run("commands", func(t *testing.T) { testCICommands(t, cases) })
}

// testCIQuoted: docs/ci.md quotes each recipe whole, as the file has it.
func testCIQuoted(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(ciDir, "..", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, lang := range map[string]string{"github-workflow.yml": "yaml", "gitlab-ci.yml": "yaml", "check.sh": "sh"} {
		b, err := os.ReadFile(filepath.Join(ciDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(md, []byte("```"+lang+"\n"+string(b)+"```\n")) {
			t.Errorf("docs/ci.md does not quote docs/ci/%s as it is, in a ```%s block", name, lang)
		}
	}
}

// decodeStrict decodes the YAML file name of docs/ci into v, refusing a
// key v does not know: a misspelt key is one its CI would ignore or
// refuse.
func decodeStrict(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ciDir, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("docs/ci/%s: %v", name, err)
	}
}

// ghWorkflow is what the recipe's GitHub Actions workflow may say.
type ghWorkflow struct {
	Name        string               `yaml:"name"`
	On          map[string]yaml.Node `yaml:"on"`
	Permissions map[string]string    `yaml:"permissions"`
	Jobs        map[string]struct {
		RunsOn      string            `yaml:"runs-on"`
		Permissions map[string]string `yaml:"permissions"`
		Env         map[string]string `yaml:"env"`
		Steps       []ghStep          `yaml:"steps"`
	} `yaml:"jobs"`
}

type ghStep struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
	If   string            `yaml:"if"`
}

// ghExpr is an expression of a workflow: ${{ ... }}.
var ghExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// testCIGitHub runs the workflow's job as a runner would: steps in order,
// run: scripts in bash -e with $GITHUB_OUTPUT, step outputs substituted,
// the job stopping at the first step that fails.
func testCIGitHub(t *testing.T, cases []ciCase) {
	var wf ghWorkflow
	decodeStrict(t, "github-workflow.yml", &wf)
	if len(wf.Jobs) != 1 {
		t.Fatalf("the workflow has %d jobs, want 1", len(wf.Jobs))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for name, job := range wf.Jobs {
				if job.Permissions["security-events"] != "write" {
					t.Errorf("job %s: upload-sarif needs permissions: security-events: write", name)
				}
				dir := c.repo(t)
				failed, status, uploaded := runGitHubJob(t, dir, job.Env, job.Steps)
				switch c.status {
				case 0:
					if failed != "" || uploaded == nil || uploaded.results != 0 {
						t.Errorf("job: failed at %q with %d, uploaded %+v; want it to pass with a SARIF of no results uploaded", failed, status, uploaded)
					}
				case 1:
					if status != 1 || uploaded == nil || uploaded.results == 0 {
						t.Errorf("job: failed at %q with %d, uploaded %+v; want it to fail with 1 after a SARIF with the findings is uploaded", failed, status, uploaded)
					}
				case 2:
					if status != 2 || uploaded != nil || !strings.Contains(failed, "Check") {
						t.Errorf("job: failed at %q with %d, uploaded %+v; want it to fail at the check with 2 and upload nothing", failed, status, uploaded)
					}
				}
			}
		})
	}
}

// sarifUpload is what upload-sarif was given.
type sarifUpload struct {
	results int
	version string // the tool's
}

// runGitHubJob runs steps in dir; it returns the name of the step that
// failed and its exit status ("" and 0 when none did), and what was
// uploaded to code scanning.
func runGitHubJob(t *testing.T, dir string, env map[string]string, steps []ghStep) (failed string, status int, uploaded *sarifUpload) {
	t.Helper()
	outputs := map[string]string{} // steps.ID.outputs.NAME: value
	installed := false
	for i, s := range steps {
		name := s.Name
		if name == "" {
			name = s.Uses + s.Run
		}
		if s.If != "" {
			t.Fatalf("step %d (%s): this test does not evaluate if:", i, name)
		}
		switch action, _, _ := strings.Cut(s.Uses, "@"); {
		case action == "actions/checkout" || action == "actions/setup-go":
			// the repository is dir; Go is the test's
		case action == "github/codeql-action/upload-sarif":
			uploaded = readSARIF(t, filepath.Join(dir, s.With["sarif_file"]))
		case s.Uses != "":
			t.Fatalf("step %d: this test does not know the action %s", i, s.Uses)
		case strings.Contains(s.Run, "go install"):
			installed = installed || strings.Contains(s.Run, "./cmd/stormaudit") || strings.Contains(s.Run, "github.com/stormaudit/stormaudit/cmd/stormaudit")
		default:
			script := ghExpr.ReplaceAllStringFunc(s.Run, func(e string) string {
				expr := ghExpr.FindStringSubmatch(e)[1]
				v, ok := outputs[expr]
				if !ok {
					t.Fatalf("step %d (%s): %s is no output of an earlier step", i, name, e)
				}
				return v
			})
			out := filepath.Join(t.TempDir(), "output")
			if err := os.WriteFile(out, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			vars := []string{"CI=true", "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=" + dir, "GITHUB_OUTPUT=" + out,
				"GITHUB_STEP_SUMMARY=" + filepath.Join(t.TempDir(), "summary")}
			for _, m := range []map[string]string{env, s.Env} {
				for k, v := range m {
					vars = append(vars, k+"="+v)
				}
			}
			code, stdout, stderr := shell(t, dir, vars, "bash", "--noprofile", "--norc", "-e", "-c", script)
			t.Logf("step %s: exit %d\n%s%s", name, code, stdout, stderr)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok && s.ID != "" {
					outputs["steps."+s.ID+".outputs."+k] = v
				}
			}
			if code != 0 {
				return name, code, uploaded
			}
		}
	}
	if !installed {
		t.Errorf("no step installs stormaudit with go install")
	}
	return "", 0, uploaded
}

// readSARIF reads the SARIF file name as code scanning would.
func readSARIF(t *testing.T, name string) *sarifUpload {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("upload-sarif: %v", err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct{ Name, Version string }
			}
			Results []json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatalf("upload-sarif: %s: %v", name, err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "stormaudit" {
		t.Fatalf("upload-sarif: %s is not one run of stormaudit in SARIF 2.1.0", name)
	}
	return &sarifUpload{results: len(log.Runs[0].Results), version: log.Runs[0].Tool.Driver.Version}
}

// glPipeline is what the recipe's .gitlab-ci.yml may say.
type glPipeline struct {
	Stages []string `yaml:"stages"`
	Job    struct {
		Stage     string            `yaml:"stage"`
		Image     string            `yaml:"image"`
		Variables map[string]string `yaml:"variables"`
		Script    []string          `yaml:"script"`
		Artifacts struct {
			When    string `yaml:"when"`
			Reports struct {
				JUnit string `yaml:"junit"`
			} `yaml:"reports"`
		} `yaml:"artifacts"`
	} `yaml:"stormaudit"`
}

// testCIGitLab runs the job's script as a runner would: its lines in
// order in one bash with -e and pipefail, the variables in the
// environment, the job failing with the status of the first line that
// fails; its JUnit report kept whatever the status.
func testCIGitLab(t *testing.T, cases []ciCase) {
	var p glPipeline
	decodeStrict(t, "gitlab-ci.yml", &p)
	job := p.Job
	if !strings.Contains(strings.Join(p.Stages, " "), job.Stage) || job.Stage == "" {
		t.Errorf("the job's stage %q is not one of the stages %q", job.Stage, p.Stages)
	}
	if job.Artifacts.When != "always" || job.Artifacts.Reports.JUnit == "" {
		t.Errorf("artifacts: when: %q, reports: junit: %q; want the JUnit report kept always, a failing job's too", job.Artifacts.When, job.Artifacts.Reports.JUnit)
	}
	var script []string
	installed := false
	for _, line := range job.Script {
		if strings.Contains(line, "go install") || strings.Contains(line, "git clone") {
			installed = installed || strings.Contains(line, "go install")
			continue
		}
		script = append(script, line)
	}
	if !installed {
		t.Errorf("no script line installs stormaudit with go install")
	}
	var vars []string
	for k, v := range job.Variables {
		vars = append(vars, k+"="+v)
	}
	vars = append(vars, "CI=true", "GITLAB_CI=true")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.repo(t)
			code, stdout, stderr := shell(t, dir, vars, "bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", strings.Join(script, "\n"))
			if code != c.status {
				t.Errorf("job: exit %d, want %d\n%s%s", code, c.status, stdout, stderr)
			}
			report := filepath.Join(dir, job.Artifacts.Reports.JUnit)
			if c.status == 2 {
				return
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatalf("the JUnit report: %v", err)
			}
			var suites struct {
				XMLName  xml.Name `xml:"testsuites"`
				Failures int      `xml:"failures,attr"`
			}
			if err := xml.Unmarshal(b, &suites); err != nil {
				t.Fatalf("the JUnit report: %v", err)
			}
			if (suites.Failures > 0) != (c.status == 1) {
				t.Errorf("the JUnit report has %d failures, after exit %d", suites.Failures, code)
			}
		})
	}
}

// testCIShell runs check.sh under sh: it exits with check's status and
// says what the status means.
func testCIShell(t *testing.T, cases []ciCase) {
	script, err := filepath.Abs(filepath.Join(ciDir, "check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := shell(t, "", nil, "sh", "-n", script); code != 0 {
		t.Fatalf("sh -n check.sh: exit %d\n%s", code, stderr)
	}
	says := map[int]string{0: "stormaudit: pass", 1: "stormaudit: fail", 2: "stormaudit: error: the check did not run"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.repo(t)
			code, stdout, stderr := shell(t, dir, nil, "sh", script)
			if code != c.status || !strings.Contains(stdout+stderr, says[c.status]) {
				t.Errorf("sh check.sh: exit %d, want %d and %q\n%s%s", code, c.status, says[c.status], stdout, stderr)
			}
			if c.status == 1 {
				if code, _, stderr := shell(t, dir, []string{"STORMAUDIT_FAIL_ON=none"}, "sh", script, "audit/fleet.ndjson"); code != 0 {
					t.Errorf("STORMAUDIT_FAIL_ON=none sh check.sh audit/fleet.ndjson: exit %d, want 0\n%s", code, stderr)
				}
			}
		})
	}
}

// ciSpan and ciLine find the stormaudit check commands of docs/ci.md's
// prose and snippets: a code span, or a line of a code block (after
// "run:" or "- "); each is cut at its first shell operator.
var (
	ciSpan = regexp.MustCompile("`(stormaudit check [^`]*)`")
	ciLine = regexp.MustCompile(`(?m)^\s*(?:run:\s*|-\s+)?(stormaudit check .*)$`)
)

// testCICommands: every stormaudit check command docs/ci.md gives outside
// the recipes runs on the logs they would meet, with the status it
// promises: 1 on the storm, 0 on the quiet fleet, 0 on both with
// --fail-on none or when it writes a baseline.
func testCICommands(t *testing.T, cases []ciCase) {
	md, err := os.ReadFile(filepath.Join(ciDir, "..", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(md)
	for _, name := range []string{"github-workflow.yml", "gitlab-ci.yml", "check.sh"} {
		b, err := os.ReadFile(filepath.Join(ciDir, name))
		if err != nil {
			t.Fatal(err)
		}
		text = strings.ReplaceAll(text, string(b), "") // tested above, as their CI runs them
	}
	found := append(ciSpan.FindAllStringSubmatch(text, -1), ciLine.FindAllStringSubmatch(text, -1)...)
	if len(found) < 2 {
		t.Fatalf("%d stormaudit check commands found in docs/ci.md: are the patterns out of date?", len(found))
	}
	for _, m := range found {
		command := m[1]
		if i := strings.IndexAny(command, "|;&>"); i >= 0 {
			command = command[:i]
		}
		command = strings.Join(strings.Fields(command), " ")
		for _, c := range cases[:2] {
			want := c.status
			if strings.Contains(command, "--fail-on none") || strings.Contains(command, "--write-baseline") {
				want = 0
			}
			if code, stdout, stderr := shell(t, c.repo(t), nil, "sh", "-c", command); code != want {
				t.Errorf("%s, on the %s fleet: exit %d, want %d\n%s%s", command, c.name, code, want, stdout, stderr)
			}
		}
	}
}

// shell runs name with args in dir (the test's own when "") with vars
// added to the environment, and returns its exit status and output.
func shell(t *testing.T, dir string, vars []string, name string, args ...string) (int, string, string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), vars...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	return 0, stdout.String(), stderr.String()
}
