# mhaviz — multi-head attention, made visible.   `make help` lists the targets.
#
#   make demo   install what is missing, build, run the lesson sample
#   make test   install what is missing, build, run every test
#   make NO_OMP=1 ...   the same without OpenMP (same results, one thread)

CC       ?= cc
PYTHON   ?= /usr/bin/python3
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -pedantic
CPPFLAGS += -D_DEFAULT_SOURCE -Isrc
# Deferred (=), so that `make deps` can install the libraries first.
PKG_CFLAGS = $(shell pkg-config --cflags libcjson stb)
PKG_LIBS   = $(shell pkg-config --libs libcjson stb) -lm
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)
ifdef NO_OMP
CFLAGS   += -Wno-unknown-pragmas
else
OMPFLAGS := -fopenmp
endif

BUILD    ?= build
SRC      := $(wildcard src/*.c)
OBJ      := $(SRC:%.c=$(BUILD)/%.o)
TESTS    := $(wildcard tests/check_*.c)
TEST_OBJ := $(TESTS:%.c=$(BUILD)/%.o)
DEMO     := samples/lesson1.json

# Debian packages the build, the tests and the demo need.
DEBS := gcc make pkg-config libcjson-dev libstb-dev check fonts-dejavu-core python3-numpy

.PHONY: all deps demo test check-unit debug clean help

all: mhaviz

mhaviz: $(OBJ) $(BUILD)/cli/main.o
	$(CC) $(CFLAGS) $(OMPFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/%.o: %.c $(wildcard src/*.h) | deps-quiet
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) $(OMPFLAGS) -c -o $@ $<

$(BUILD)/check_mhaviz: $(TEST_OBJ) $(OBJ)
	$(CC) $(CFLAGS) $(OMPFLAGS) -o $@ $^ $(PKG_LIBS) $(CHECK_LIBS)

## demo: install what is missing, build, and run the lesson sample
demo: deps mhaviz
	./mhaviz $(DEMO)

## test: install what is missing, build, and run every test (exit 1 on any failure)
test: deps mhaviz $(BUILD)/check_mhaviz
	$(PYTHON) tests/reference.py $(BUILD)/reference
	MHAVIZ_BIN=./mhaviz MHAVIZ_REF=$(BUILD)/reference $(BUILD)/check_mhaviz

## debug: build with sanitizers and no optimisation into build-debug/
debug:
	$(MAKE) BUILD=build-debug CFLAGS="-O0 -g -fsanitize=address,undefined -fno-omit-frame-pointer" mhaviz

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
	@pkg-config --exists libcjson stb check || { echo "missing libraries: run 'make deps'"; exit 1; }

clean:
	rm -rf build build-debug mhaviz

help:
	@grep -E '^## ' Makefile | sed 's/^## /  make /'
