package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/urfave/cli/v3"
)

// completeFlag is how the shell scripts ask for completions: the words
// typed before the cursor, the word under it when it begins with "-",
// then this flag (urfave/cli's protocol, which its zsh and fish scripts
// speak and bashCompletion does too).
const completeFlag = "--generate-shell-completion"

// flagValues lists the values of the flags that take one of a few, by
// command and flag; "" is any command.
var flagValues = map[string]map[string]func() []string{
	"check":    {"format": list("text", "json", "sarif", "junit", "github"), "fail-on": list("none", "info", "warning", "error")},
	"export":   {"format": list("arrow", "ndjson"), "compression": list("zstd", "lz4", "none")},
	"verify":   {"format": list("text", "json")},
	"timeline": {"format": list("text", "json")},
	"replay":   {"format": list("text", "json")},
	"rules":    {"format": list("text", "json")},
	"":         {"policy": policy.PresetNames},
}

func list(vs ...string) func() []string { return func() []string { return vs } }

// complete answers a completion request (args end with completeFlag)
// when stormaudit knows better than urfave/cli: the values of a flag,
// and nothing (so that the shell completes file names) where a command
// takes files. It reports false to leave the request to urfave/cli:
// flags and subcommands.
func complete(app *cli.Command, args []string, w io.Writer) bool {
	words := args[1 : len(args)-1]
	cmd, name := app, ""
	for i := 0; i < len(words); i++ {
		word := words[i]
		if strings.HasPrefix(word, "-") {
			if f := flagNamed(cmd, word); f != nil && !isBool(f) && !strings.Contains(word, "=") && i < len(words)-1 {
				i++ // its value
			}
			continue
		}
		if sub := cmd.Command(word); sub != nil {
			cmd, name = sub, strings.TrimSpace(name+" "+word)
		}
	}
	if len(words) > 0 && strings.HasPrefix(words[len(words)-1], "-") {
		f := flagNamed(cmd, words[len(words)-1])
		switch {
		case f == nil:
			return false // a flag being typed: urfave/cli lists them
		case !isBool(f):
			for _, v := range valuesOf(name, f.Names()[0]) {
				fmt.Fprintln(w, v)
			}
			return true // its values, or the shell's files
		}
		// after a boolean flag, what follows the command
	}
	for _, sub := range cmd.Commands { // subcommands; none: arguments, files
		if !sub.Hidden {
			fmt.Fprintf(w, "%s:%s\n", sub.Name, sub.Usage)
		}
	}
	return true
}

// flagNamed returns cmd's flag (or the root's) that word (-f, --format)
// names, nil if none.
func flagNamed(cmd *cli.Command, word string) cli.Flag {
	name := strings.TrimLeft(word, "-")
	for _, c := range []*cli.Command{cmd, cmd.Root()} {
		for _, f := range c.Flags {
			if slices.Contains(f.Names(), name) {
				return f
			}
		}
	}
	return nil
}

func isBool(f cli.Flag) bool {
	_, ok := f.(*cli.BoolFlag)
	return ok
}

func valuesOf(cmd, flag string) []string {
	for _, key := range []string{cmd, ""} {
		if f := flagValues[key][flag]; f != nil {
			return f()
		}
	}
	return nil
}

// bashCompletion is the bash completion script: it needs nothing but bash
// (not the bash-completion package), and falls back to file names where
// stormaudit offers nothing.
const bashCompletion = `# bash completion for stormaudit: source <(stormaudit completion bash)
_stormaudit() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  local -a req=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
  [[ "$cur" == -* ]] && req+=("$cur")
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" "${req[@]}" --generate-shell-completion 2>/dev/null | cut -d: -f1)" -- "$cur"))
  if [[ ${#COMPREPLY[@]} -eq 0 ]]; then
    COMPREPLY=($(compgen -f -- "$cur")) # inputs, or a file-valued flag's file
  fi
}
complete -o filenames -o bashdefault -F _stormaudit stormaudit
`

// configureCompletion lists the completion command in the help and gives
// it stormaudit's bash script.
func configureCompletion(c *cli.Command) {
	c.Hidden = false
	c.Usage = "print a shell completion script: bash, zsh, fish or pwsh"
	c.Description = "bash:  source <(stormaudit completion bash)   (in ~/.bashrc; needs nothing but bash)\n" +
		"zsh:   source <(stormaudit completion zsh)\n" +
		"fish:  stormaudit completion fish > ~/.config/fish/completions/stormaudit.fish"
	for _, sub := range c.Commands {
		if sub.Name == "bash" {
			sub.Action = func(_ context.Context, cmd *cli.Command) error {
				_, err := io.WriteString(cmd.Root().Writer, bashCompletion)
				return err
			}
		}
	}
}
