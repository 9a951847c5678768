package main

import (
	"fmt"
	"syscall"
)

// The exit statuses (docs/commands.md) have one constructor each, and
// only these build an exitError (TestExitErrorOnlyFromConstructors):
//
//   - usageErr: 2, a command line the user must change;
//   - failed: 2, an input the command could not read or cannot use, or
//     an output it could not write;
//   - verdict: 1, the command's answer is no;
//   - inconclusive: 3, the command could not answer: a replay that fell
//     behind its own schedule says nothing of the broker;
//   - interrupted: 130, the command stopped because its context ended.
//
// An error that carries no status exits 2 too; the outermost exitError
// in an error's chain gives the status.

// exitError carries an exit status and a message for stderr.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr returns an error with exit status 2 for a command line the
// user must change: a flag's value (a file a flag names that cannot be
// read or is not what the flag takes, too), a missing or extra argument,
// flags that do not go together.
func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// failed returns err, said as "what: err", with exit status 2: an input
// the command could not read or cannot use, or an output it could not
// write. what names the command and its step ("demo: keygen"), or is
// empty when err names them already.
func failed(what string, err error) error {
	if what != "" {
		err = fmt.Errorf("%s: %w", what, err)
	}
	return &exitError{code: 2, err: err}
}

// verdict returns err with exit status 1: the command did its job and
// its answer is no: findings at or above --fail-on, a dataset or a proof
// that does not verify, a plan the broker did not hold.
func verdict(err error) error {
	return &exitError{code: 1, err: err}
}

// inconclusive returns err with exit status 3: the command ran and
// cannot answer yes or no, as a replay that did not keep its schedule
// (or failed on this machine) cannot say whether the broker held.
func inconclusive(err error) error {
	return &exitError{code: 3, err: err}
}

// interrupted returns err with exit status 130, Ctrl-C's, for a command
// that stopped because its context ended; run gives the status of the
// signal that ended it instead, when one did.
func interrupted(err error) error {
	return &exitError{code: (&signalError{sig: syscall.SIGINT}).exitCode(), err: err}
}
