# compare.sh: what scripts/differential.sh and scripts/real-clients.sh share:
# run a Lua program on cosock and on cosock-native and compare what it prints.
# Sourced, not run. The caller sets `top` (this tree), `ref` (the cosock
# checkout), `work` (a temporary directory), `rundir` (where programs run),
# `limit` (seconds per run), and may define `normalise_more`, a filter for its
# own masks (the default passes everything). compare_program counts into
# `same`, `differ` and `unstable`.

# Output that legitimately differs: the library's own file names and line
# numbers, library and C frames of tracebacks (collapsed to one line),
# addresses, the clock of the stall dump, and the lines cosock-native adds to
# errors to name their task (a task's traceback ends with "(in task ...)"; a
# wait's error has "(task ...)" after cosock's line). Everything else is
# compared.
normalise() {
	sed -e '/^	(in \(an unnamed \)\{0,1\}task[ ,]/d' -e '/^(task .*)$/d' \
		-e "s#$ref/#<lib>/#g" -e "s#$top/lua/#<lib>/#g" \
		-e 's#<lib>/[A-Za-z0-9_/.]*\.lua:[0-9]*:#<lib>:#g' \
		-e 's#<lib>/[A-Za-z0-9_/.]*\.lua#<lib>#g' \
		-e 's/0x[0-9a-fA-F]\{4,\}/0x?/g' \
		-e 's/^last wake:\t[0-9]*$/last wake:\t<time>/' |
	normalise_more |
	awk '/^\t(\[C\]|<lib>|\(\.\.\.tail calls\.\.\.\))/ { if (!lib) print "\t<library frames>"; lib = 1; next }
		{ lib = 0; print }'
}
command -v normalise_more >/dev/null 2>&1 || normalise_more() { cat; }

run_ref() {
	(cd "$rundir" && LUA_PATH="$ref/?.lua;$ref/?/init.lua;;" timeout "$limit" lua5.3 "$1" 2>&1) ||
		echo "[exit status $?]"
}
run_native() {
	(cd "$rundir" && LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;;" LUA_CPATH="$top/build/src/cpath/?.so;;" \
		timeout "$limit" lua5.3 "$1" 2>&1) || echo "[exit status $?]"
}

# compare_program NAME FILE: twice on cosock, once on cosock-native; prints
# "== NAME: same" or "== NAME: differs" and the diff (cosock's lines -,
# cosock-native's +), after a note when cosock's own two runs differ (the
# program depends on something cosock leaves open: an order of pairs(), a
# timing).
compare_program() {
	run_ref "$2" | normalise > "$work/$1.cosock"
	run_ref "$2" | normalise > "$work/$1.cosock2"
	run_native "$2" | normalise > "$work/$1.native"
	if ! cmp -s "$work/$1.cosock" "$work/$1.cosock2"; then
		echo "== $1: cosock's output differs between two runs (not deterministic)"
		diff -u "$work/$1.cosock" "$work/$1.cosock2" | sed 1,2d || true
		unstable=$((unstable + 1))
	fi
	if diff -u --label "$1 (cosock)" --label "$1 (cosock-native)" \
		"$work/$1.cosock" "$work/$1.native" > "$work/$1.diff"; then
		echo "== $1: same"
		same=$((same + 1))
	else
		echo "== $1: differs"
		cat "$work/$1.diff"
		differ=$((differ + 1))
	fi
}

# pick_programs DIR [NAME...]: the programs to run into `list`: DIR/NAME.lua for
# each NAME (exit 2 if one is missing), or every DIR/*.lua without names.
pick_programs() {
	pick_dir=$1
	shift
	if [ $# -eq 0 ]; then
		list=$(ls "$pick_dir"/*.lua)
		return
	fi
	list=""
	for n in "$@"; do
		[ -f "$pick_dir/${n%.lua}.lua" ] || { echo "$(basename "$0"): no program $pick_dir/${n%.lua}.lua" >&2; exit 2; }
		list="$list $pick_dir/${n%.lua}.lua"
	done
}
