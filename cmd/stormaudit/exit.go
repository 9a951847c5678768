package main

import "fmt"

// exitError carries an exit status and a message for stderr.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr returns an error with exit status 2.
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
