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

# Circles between the files of one folder, looked for twice:
# - by includes: a unit is a file x.c with its header x.h (a header without
#   a .c, such as core/status.h, is a unit of its own); a folder's private
#   header x_parts.h, which x.c shares with the other files of its folder,
#   belongs to x's unit, whose name it carries. Unit A points to unit B
#   when a file of A includes a header of B.
# - by calls: file A points to file B when A calls a function that B
#   defines (a header that declares the functions of several files, as
#   render_parts.h does, hides such arrows from the first look).
# A circle of either kind is an error, named file by file. (The two are
# kept apart: io/input_fields.c includes io/input.h for its types while
# input.c calls input_fields.c's functions, and that is no circle.)
python_check=$(cat <<'PY'
import os, re, sys
def unit(name):
    stem = name.rsplit(".", 1)[0]
    return stem[: -len("_parts")] if stem.endswith("_parts") else stem
def code(text):  # comments and string and character literals blanked
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank, text, flags=re.S)
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w *]*?\b(\w+)\([^;{}]*\)\s*\n\{", re.M)
def circles(folder, arrows, what):  # print each circle of arrows (node -> node -> [why]); 1 if any
    state, found = {}, []
    def visit(u, path):
        if state.get(u) == 1:
            found.append(path[path.index(u):] + [u])
        if state.get(u):
            return
        state[u] = 1
        for v in sorted(arrows.get(u, {})):
            visit(v, path + [u])
        state[u] = 2
    for u in sorted(arrows):
        visit(u, [])
    for loop in found:
        print("layers: src/%s/: files %s each other in a circle: %s" % (folder, what, " -> ".join(loop)))
        for a, b in zip(loop, loop[1:]):
            why = arrows[a][b]
            print("    " + "; ".join(why[:4]) + ("; ..." if len(why) > 4 else ""))
    return 1 if found else 0
bad = 0
for folder in sorted(os.listdir("src")):
    d = os.path.join("src", folder)
    if not os.path.isdir(d):
        continue
    text = {f: open(os.path.join(d, f), encoding="utf-8").read() for f in sorted(os.listdir(d)) if f.endswith((".c", ".h"))}
    included, called, definer = {}, {}, {}
    for f in text:
        for n, line in enumerate(text[f].split("\n"), 1):
            m = re.match(r'#include "' + re.escape(folder) + r'/([^"/]+\.h)"', line)
            if m and unit(m.group(1)) != unit(f):
                included.setdefault(unit(f), {}).setdefault(unit(m.group(1)), []).append(
                    "src/%s/%s:%d includes %s/%s" % (folder, f, n, folder, m.group(1)))
        if f.endswith(".c"):
            for m in DEFINITION.finditer(code(text[f])):
                definer[m.group(1)] = f
    for f in text:
        if f.endswith(".c"):
            for name in sorted(set(re.findall(r"\b(\w+)\s*\(", code(text[f]))) & set(definer)):
                if definer[name] != f:
                    called.setdefault(f, {}).setdefault(definer[name], []).append(
                        "src/%s/%s calls %s" % (folder, f, name))
    bad |= circles(folder, included, "include")
    bad |= circles(folder, called, "call")
sys.exit(bad)
PY
)
"${PYTHON:-/usr/bin/python3}" -c "$python_check" || bad=1

[ "$bad" -eq 0 ] && echo "layers: every include of src/ points down or across (${LAYERS[*]}), and no files of one folder include or call each other in a circle"
exit "$bad"
