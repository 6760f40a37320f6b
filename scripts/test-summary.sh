#!/bin/sh
# Prints each runner's summary from the logs of a make check, after the
# program it belongs to (the log's name, or under valgrind, whose one log
# has them all, the "valgrind: PROGRAM" line before it); then one closing
# line for the whole run counted from them: "N passed, N failed, N skipped"
# (cmocka's PASSED/FAILED lines, busted's successes/failures/errors/pending).
# A run that failed (STATUS not 0) with no failure counted counts one: a
# runner died before its summary. For scripts/test.sh and cross-test.sh.
#   scripts/test-summary.sh STATUS LOG...
status=${1:?usage: scripts/test-summary.sh STATUS LOG...}
shift
awk '
	/^valgrind: / { prog = $2; sub(".*/", "", prog) }
	/^\[  (PASSED|FAILED)  \]|^[0-9]+ success/ {
		p = prog
		if (p == "") { p = FILENAME; sub(".*/", "", p); sub("\\.log$", "", p) }
		print p ": " $0
	}' "$@"
cat "$@" | awk -v status="$status" '
	/^\[  PASSED  \] [0-9]+ test/ { p += $4 }
	/^\[  FAILED  \] [0-9]+ test/ { f += $4 }
	/^[0-9]+ successes? \/ [0-9]+ failures? \/ [0-9]+ errors?/ { p += $1; f += $4 + $7; pend += $10 }
	END {
		if (status != 0 && f == 0) f = 1
		printf "%d passed, %d failed, %d skipped\n", p, f, pend
	}'
