#!/bin/sh
# memcheck.sh BIN FILE... — run the CLI on each FILE under valgrind memcheck.
#
# A file passes when valgrind reports no error and no definitely-lost bytes
# (valgrind then exits 99, see VALGRIND in the Makefile) and the CLI ends
# normally with a documented exit code (0 or 1: samples succeed, bad inputs
# are refused). Prints one line per file and a closing count.
set -u
bin=$1
shift
valgrind=${VALGRIND:-valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mhaviz-memcheck-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
passed=0
failed=0
for f in "$@"; do
    rm -rf "$scratch/out"
    $valgrind "$bin" -q -t 2 -o "$scratch/out" "$f" >"$scratch/log" 2>&1
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 1 ]; then
        passed=$((passed + 1))
        echo "memcheck: ok (exit $rc) $f"
    else
        failed=$((failed + 1))
        echo "memcheck: FAILED (exit $rc) $f"
        sed 's/^/    /' "$scratch/log"
    fi
done
echo "memcheck: $passed passed, $failed failed"
[ $failed -eq 0 ]
