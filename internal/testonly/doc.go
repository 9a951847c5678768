// Package testonly is the home of stormaudit's test tooling and test
// data; it has no code of its own. Its packages are:
//
//	testkit     keys, generated logs, input files and CPU time the tests of
//	            several packages share
//	simdata     simulated datasets the benchmarks share, kept between runs
//	realcorpus  the real-client corpus (testdata/realclients): recording it
//	            and reading its broker logs into the ground truth
//	realcorpus/gen  the corpus recorder, a command (docs/corpus.md)
//
// # Who imports them
//
// Only tests (_test.go files, which .ci/run and the bench/ scripts run),
// the other packages here, and the corpus recorder (realcorpus/gen). No
// package stormaudit is built from imports one of them, so nothing here
// is part of the program; a package here may import any package of the
// library, but not the commands' front end (cmd/internal). layout_test.go
// at the module root holds this; docs/layout.md says where everything
// else goes.
package testonly
