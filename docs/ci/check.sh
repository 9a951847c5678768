#!/bin/sh
# stormaudit check in any CI, as a plain shell step that branches on the
# exit status. Usage: check.sh [LOG...] (default: audit/*.ndjson).
# STORMAUDIT_FAIL_ON (or stormaudit.toml) sets the lowest severity that
# fails: error (the default), warning, info, or none. Writes
# stormaudit-junit.xml.
set -u
[ "$#" -gt 0 ] || set -- audit/*.ndjson

status=0
stormaudit check --format text,junit --output -,stormaudit-junit.xml "$@" || status=$?

case $status in
0)
	echo "stormaudit: pass: no finding at or above --fail-on"
	;;
1)
	echo "stormaudit: fail: findings at or above --fail-on (above, and in stormaudit-junit.xml)" >&2
	;;
2)
	echo "stormaudit: error: the check did not run: a usage, input or I/O error (above)" >&2
	;;
*)
	echo "stormaudit: stopped with status $status (130: interrupted, 143: terminated)" >&2
	;;
esac
exit "$status"
