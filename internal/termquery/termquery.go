// Package termquery keeps package initialisation from querying the
// terminal.
//
// Bubble Tea v1 asks Lip Gloss, from its package init, whether the
// terminal's background is dark; when stdout is a terminal, termenv then
// writes an OSC 11 query and a cursor-position request and waits up to
// termenv.OSCTimeout (5 s) for an answer. Every stormaudit command links
// the browser, so under a terminal that does not answer (script(1), some
// CI runners, serial consoles) each one stalled 5 s before its first
// output. termenv sends no query when TERM starts with "dumb".
//
// This package's init sets TERM=dumb, and Restore puts back what was
// there. It imports only syscall, so the language's initialisation order
// (packages sorted by import path, each initialised once its imports are)
// runs it before package os, and so before termenv, Lip Gloss and Bubble
// Tea, which import os. The answer Bubble Tea's init caches is Lip Gloss's
// default for an unknown terminal (a dark background); the browser draws
// no colour that depends on it. The colour profile is read later, from
// the restored TERM.
package termquery

import "syscall"

var (
	term    string
	hadTerm bool
	swapped bool
)

func init() {
	term, hadTerm = syscall.Getenv("TERM")
	swapped = syscall.Setenv("TERM", "dumb") == nil
}

// Restore puts TERM back as the process found it. It is safe to call more
// than once; calls after the first do nothing.
func Restore() {
	if !swapped {
		return
	}
	swapped = false
	if hadTerm {
		syscall.Setenv("TERM", term)
		return
	}
	syscall.Unsetenv("TERM")
}
