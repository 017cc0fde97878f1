#!/usr/bin/env bash
# layers.sh — src/'s folders include only folders below them (docs/architecture.md).
#
# The layers, bottom to top; a file may include headers of its own folder
# and of any folder earlier in this list, never of a later one. That rule
# leaves no room for a circle between folders; within a folder, circles
# between files are looked for below. Exit 1, naming each include, on any
# arrow that runs back up or round.
set -uo pipefail
cd "$(dirname "$0")/.."
LAYERS=(core text io checkpoint draw pictures report models run)

rank() { local i; for i in "${!LAYERS[@]}"; do [ "${LAYERS[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }

bad=0
for d in src/*/; do
    d=$(basename "$d")
    [ "$(rank "$d")" -ge 0 ] || { echo "layers: src/$d/ is not in the list of layers (tests/layers.sh)"; bad=1; }
done
# (Headers from assets/, and lesson_assets.h, which the build makes from
# assets/lesson/, belong to no layer.)
while IFS=: read -r file line inc; do
    from=$(echo "$file" | cut -d/ -f2)
    to=${inc%%/*}
    rf=$(rank "$from") rt=$(rank "$to")
    if [ "$rt" -lt 0 ]; then
        echo "$file:$line: includes \"$inc\": not a src/ layer path (\"layer/file.h\")"; bad=1
    elif [ "$rt" -gt "$rf" ]; then
        echo "$file:$line: includes \"$inc\": $from/ is below $to/ (the arrow runs back up)"; bad=1
    fi
done < <(grep -rnoE '^#include "[^"]+"' src --include='*.[ch]' | sed -E 's/#include "([^"]+)"/\1/' |
         grep -v '\.\./\.\./assets/' | grep -v ':lesson_assets\.h$')

# Circles between the files of one folder: follow each header's includes.
python_check=$(cat <<'PY'
import os, re, sys
inc = {}
for root, _, files in os.walk("src"):
    for f in files:
        if f.endswith(".h"):
            p = os.path.relpath(os.path.join(root, f), "src")
            inc[p] = re.findall(r'^#include "([^"]+\.h)"', open(os.path.join(root, f)).read(), re.M)
state = {}
def visit(p, path):
    if state.get(p) == 1:
        print("layers: headers include each other in a circle: " + " -> ".join(path[path.index(p):] + [p]))
        return 1
    if state.get(p) == 2:
        return 0
    state[p] = 1
    bad = sum(visit(q, path + [p]) for q in inc.get(p, []) if q in inc)
    state[p] = 2
    return bad
sys.exit(1 if sum(visit(p, []) for p in sorted(inc)) else 0)
PY
)
"${PYTHON:-/usr/bin/python3}" -c "$python_check" || bad=1

[ "$bad" -eq 0 ] && echo "layers: every include of src/ points down or across (${LAYERS[*]})"
exit "$bad"
