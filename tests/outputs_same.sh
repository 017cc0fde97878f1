#!/usr/bin/env bash
# outputs_same.sh — proof that a change of layout changed no output.
#
#   tests/outputs_same.sh record DIR    write every output into DIR
#   tests/outputs_same.sh compare DIR   write them again into a scratch
#                                       folder and compare with DIR, byte
#                                       for byte (exit 1 on any difference)
#
# What it records, all with ./mhaviz (build it first: make):
#   init/     the inputs `mhaviz init` writes: random, with embeddings,
#             designed (and pooled), tokens that need escaping;
#   samples/  every sample (samples/*.json, samples/trained/*.json), plus
#             lesson1 with --kv-heads 4,2,1, --steps, --query 6 and
#             --query because, and lesson2 with --steps --npy;
#   models/   real-model runs on the tiny checkpoints of
#             tests/models/make_checkpoints.py (build/models) with the real
#             tokenizer files of tests/tokenizers/reference.mjs
#             (build/tokenizers): GPT-2 and Llama 3, one layer and every
#             layer, --head-effects, --head-maps, --ablate, --repeat,
#             --text-file, --kv-heads;
#   tests/    the output folder of every run of the binary the test suite
#             makes, the real-model tests' too (the suite gets MHAVIZ_MODELS
#             and MHAVIZ_TOKENIZERS as `make test` gives them): the suite
#             runs with MHAVIZ_BIN pointing at this script, which runs
#             ./mhaviz and copies what a successful run wrote.
# A test run is named by its arguments, with each existing file replaced by
# a hash of its bytes, each model folder (one holding config.json) by its
# name and a hash of its files, and the output folder by OUT, so the scratch
# folders' random names do not matter. (The tests' stdout is not kept: the
# script leaves the binary's streams alone, and report.txt holds the report.)
set -uo pipefail

if [ -n "${OUTPUTS_SAME_REAL:-}" ]; then   # called by a test, as the binary
    out="" key="" prev="" layer=""
    for a in "$@"; do
        if [ "$prev" = "-o" ] || [ "$prev" = "--out" ]; then out=$a; key+=" OUT"
        elif [ -f "$a" ] && [ -r "$a" ]; then key+=" file:$(sha256sum < "$a" | cut -c1-16)"
        elif [ -f "$a/config.json" ]; then   # a model folder: its name (the report's) and files
            key+=" model:$(basename "$a"):$(cd "$a" && find . -type f -print0 | LC_ALL=C sort -z |
                xargs -0 sha256sum | sha256sum | cut -c1-16)"
        else key+=" $a"; fi
        [ "$prev" = "--layer" ] && layer=$a
        prev=$a
    done
    if [ -z "$out" ]; then    # the default folder, named as cli/main.c's default_out_dir names it
        last=${!#}; name=$(basename "$last")
        [ -d "$last" ] || { stem=${name%.*}; [ -n "$stem" ] && name=$stem; }   # a file: its stem
        if [ -z "$layer" ]; then out=${name}_mhaviz
        elif [[ $layer =~ ^[0-9]+$ ]]; then out=${name}_layer$((10#$layer))_mhaviz
        else out=${name}_layers${layer}_mhaviz; fi
    fi
    # Runs aimed at one folder take turns (a test starts some at once), so
    # the folder copied is this run's.
    lock="$OUTPUTS_SAME_DIR.locks/$(realpath -m "$out" | sha256sum | cut -c1-16)"
    exec 9> "$lock"
    flock 9
    "$OUTPUTS_SAME_REAL" "$@" 9>&-
    rc=$?
    if [ "$rc" -eq 0 ] && [ -d "$out" ]; then
        d="$OUTPUTS_SAME_DIR/$(printf '%s' "$key" | sha256sum | cut -c1-16)"
        if mkdir "$d" 2> /dev/null; then   # the first of the runs with these arguments
            printf '%s\n' "$key" > "$d/ARGS"
            cp -r "$out" "$d/out" 2> /dev/null
        fi
    fi
    exit "$rc"
fi

cd "$(dirname "$0")/.."
mode=${1:-} dir=${2:-}
[ -n "$dir" ] && { [ "$mode" = record ] || [ "$mode" = compare ]; } ||
    { echo "usage: $0 record|compare DIR" >&2; exit 2; }
[ -x ./mhaviz ] || { echo "$0: build ./mhaviz first (make)" >&2; exit 2; }

record_init() {   # record_init BIN DIR: the inputs `mhaviz init` writes
    local bin=$1 d=$2
    mkdir -p "$d" || exit 2
    "$bin" init --tokens "the cat sat on the mat" --d-model 16 --heads 4 --seed 7 > "$d/random.json" &&
    "$bin" init --tokens "a b c d" --d-model 8 --heads 2 --embeddings > "$d/embeddings.json" &&
    "$bin" init --tokens "the old man gave his dog a bone and the dog gave the man a look" --designed \
        > "$d/designed.json" &&
    "$bin" init --tokens "Mary gave the book to John because John had helped Mary" --designed \
        --kv-heads 2 --subject "Mary John" > "$d/designed_kv2.json" &&
    "$bin" init --tokens $'caf\xc3\xa9 "quoted" back\\slash' --d-model 8 --heads 2 > "$d/escapes.json" ||
        { echo "an init run failed" >&2; exit 1; }
}

record_models() {   # record_models BIN DIR: real-model runs (build/models, build/tokenizers)
    local bin=$1 d=$2 m s="When Mary and John went to the store, John gave a drink to"
    mkdir -p "$d" || exit 2
    m=$(mktemp -d /tmp/outputs-same-models-XXXXXX) || exit 2
    # a model folder as a teacher downloads it: the checkpoint and its tokenizer
    mkdir "$m/gpt2" "$m/llama3" &&
    cp build/models/gpt2_vocab/config.json build/models/gpt2_vocab/model.safetensors \
        build/tokenizers/gpt2/tokenizer.json build/tokenizers/gpt2/tokenizer_config.json "$m/gpt2" &&
    cp build/models/llama3_vocab/config.json build/models/llama3_vocab/model.safetensors \
        build/tokenizers/llama3/tokenizer.json build/tokenizers/llama3/tokenizer_config.json "$m/llama3" &&
    printf '%s\n%s\n' "$s" "The cat sat on the mat and the cat slept" > "$m/two.txt" ||
        { rm -rf "$m"; echo "cannot make the model folders" >&2; exit 1; }
    for f in gpt2 llama3; do
        "$bin" -q -t 2 --text "$s" --layer 1 -o "$d/${f}_layer1" "$m/$f" &&
        "$bin" -q -t 2 --text "$s" -o "$d/${f}_all" "$m/$f" &&
        "$bin" -q -t 2 --head-effects --head-maps --text "$s" -o "$d/${f}_effects" "$m/$f" &&
        "$bin" -q -t 2 --ablate 0.1,1.0 --text "$s" -o "$d/${f}_ablate" "$m/$f" &&
        "$bin" -q -t 2 --text-file "$m/two.txt" -o "$d/${f}_text_file" "$m/$f" ||
            { rm -rf "$m"; echo "a model run failed: $f" >&2; exit 1; }
    done
    "$bin" -q -t 2 --repeat --text "$s" --layer 0-1 -o "$d/gpt2_repeat" "$m/gpt2" &&
    "$bin" -q -t 2 --kv-heads 2,1 --steps --text "$s" --layer 0 -o "$d/gpt2_kv21" "$m/gpt2" ||
        { rm -rf "$m"; echo "a model run failed" >&2; exit 1; }
    rm -rf "$m"
}

record() {   # record DIR: every output into DIR (which must not exist)
    local d bin=$PWD/mhaviz; d=$(realpath -m "$1")
    mkdir -p "$d/samples" "$d/tests" "$d/tests.locks" || exit 2
    for f in samples/*.json samples/trained/*.json; do
        n=${f#samples/}; n=${n%.json}; n=${n//\//_}
        "$bin" -q -t 2 -o "$d/samples/$n" "$f" > /dev/null || { echo "failed: $f" >&2; exit 1; }
    done
    "$bin" -q -o "$d/samples/lesson1_kv421" --kv-heads 4,2,1 samples/lesson1.json > /dev/null &&
    "$bin" -q -o "$d/samples/lesson1_steps" --steps samples/lesson1.json > /dev/null &&
    "$bin" -q -o "$d/samples/lesson1_query6" --query 6 samples/lesson1.json > /dev/null &&
    "$bin" -q -o "$d/samples/lesson1_because" --query because samples/lesson1.json > /dev/null &&
    "$bin" -q -o "$d/samples/lesson2_steps_npy" --steps --npy samples/lesson2_gqa.json > /dev/null &&
    "$bin" samples/lesson1.json -o "$d/samples/lesson1_stdout" > "$d/samples/lesson1_stdout.txt" ||
        { echo "a sample run failed" >&2; exit 1; }
    record_init "$bin" "$d/init"
    # what the tests and the model runs read, made as `make run-tests` makes it
    make --no-print-directory -s ./mhaviz build/check_mhaviz build/generate_samples \
        build/tokenizers/llama3/ids.json > /dev/null &&
    "${PYTHON:-/usr/bin/python3}" tests/reference.py build/reference > /dev/null &&
    "${PYTHON:-/usr/bin/python3}" tests/models/make_checkpoints.py build/models > /dev/null || exit 1
    record_models "$bin" "$d/models"
    # the test suite, with this script as its binary (as `make run-tests` runs it)
    OUTPUTS_SAME_REAL=$bin OUTPUTS_SAME_DIR=$d/tests MHAVIZ_BIN=$PWD/tests/outputs_same.sh \
        MHAVIZ_REF=build/reference MHAVIZ_GEN=build/generate_samples \
        MHAVIZ_MODELS=build/models MHAVIZ_TOKENIZERS=build/tokenizers build/check_mhaviz \
        > "$d/test-log.txt" 2>&1 || echo "(some tests failed with this script as the binary: $d/test-log.txt)" >&2
    rm -rf "$d/tests.locks"
    echo "recorded $(find "$d" -type f | wc -l) files in $d"
}

if [ "$mode" = record ]; then
    [ -e "$dir" ] && { echo "$0: $dir exists" >&2; exit 2; }
    record "$dir"
    exit
fi
[ -d "$dir" ] || { echo "$0: $dir: no such folder" >&2; exit 2; }
new=$(mktemp -d /tmp/outputs-same-XXXXXX)
record "$new/now" || exit 1
if diff -r -x test-log.txt "$dir" "$new/now"; then
    echo "outputs_same: $(find "$dir" -type f ! -name test-log.txt | wc -l) files, byte-identical"
    rm -rf "$new"
else
    echo "outputs_same: outputs differ (now: $new/now)"; exit 1
fi
