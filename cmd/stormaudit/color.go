package main

import (
	"errors"
	"io"
	"os"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/urfave/cli/v3"
)

// colorFlag is --color, on every command: whether check's text and the
// browser draw in colour.
var colorFlag = &cli.StringFlag{Name: "color", Value: "auto", Sources: cli.EnvVars("STORMAUDIT_COLOR"),
	Usage: "colour: auto (on a terminal, unless NO_COLOR is set), always or never",
	Validator: func(s string) error {
		if s != "" && s != "auto" && s != "always" && s != "never" { // "": an empty STORMAUDIT_COLOR, auto
			return errors.New("expected auto, always or never")
		}
		return nil
	}}

// colorOn reports whether output to w is drawn in colour: --color always,
// or auto with w a terminal and NO_COLOR unset or empty.
func colorOn(cmd *cli.Command, w io.Writer) bool {
	switch cmd.String("color") {
	case "always":
		return true
	case "never":
		return false
	}
	return os.Getenv("NO_COLOR") == "" && isTerminal(w)
}

// colorRenderer is the browser's renderer for out under --color: nil
// (lipgloss's own detection, which honours NO_COLOR) for auto.
func colorRenderer(cmd *cli.Command, out io.Writer) *lipgloss.Renderer {
	switch cmd.String("color") {
	case "always":
		r := lipgloss.NewRenderer(out, termenv.WithUnsafe())
		r.SetColorProfile(termenv.ANSI256)
		return r
	case "never":
		r := lipgloss.NewRenderer(out)
		r.SetColorProfile(termenv.Ascii)
		return r
	}
	return nil
}
