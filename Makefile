# tracemount - mount a trace archive as its merged result.
#
#   make deps    install missing Debian packages (apt-get, as root)
#   make         build ./tracemount
#   make check   build, then run every test, also under ASan + UBSan, and
#                the units and the concurrent readers under ThreadSanitizer,
#                the units and the fuzz replays under clang's ASan + UBSan;
#                with the interop comparison when the shared folder's
#                reference (../shared/reference) is there and starts
#   make demo    mount the bundled demo archive, show it, unmount
#   make fuzz    build the libFuzzer targets (clang) and run each briefly
#   make bench   benchmarks (not tests): throughput and peak RSS
#   make interop TRACE_PROCESSOR_SHELL=/path
#                compare, table by table, Perfetto's trace processor's import
#                of each fixture archive with its import of our merged.pftrace
#                and with timeline.tsv (make check runs it too)
#   make install PREFIX=/usr/local

PREFIX ?= /usr/local
VERSION := 0.1.0
CC ?= cc
PKG_CONFIG ?= pkg-config

# Debian packages: build, run, and what the tests use.
DEB_PKGS := build-essential pkg-config libfuse3-dev fuse3 libarchive-dev \
	zlib1g-dev libcjson-dev libprotobuf-c-dev protobuf-c-compiler \
	protobuf-compiler jq graphviz zip unzip zstd xz-utils bzip2 gzip \
	tar psmisc groff-base
FUZZ_PKGS := clang libclang-rt-dev

ifeq ($(SAN),1)
BUILD := build/san
XFLAGS := -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
else ifeq ($(SAN),clang)
# make check's fourth build: the fuzz targets' replays and the unit tests
# under clang's ASan and UBSan, which check what gcc's do not (an offset
# added to a null pointer, say: `make fuzz` found one that make check had
# passed)
BUILD := build/clang
CC := clang
XFLAGS := -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
else ifeq ($(SAN),thread)
# make check's third build: the tests of its threads (tests/run.sh)
BUILD := build/tsan
XFLAGS := -O1 -fsanitize=thread -fno-omit-frame-pointer
else
BUILD := build/rel
XFLAGS := -O2
endif

PKGS_CORE := libarchive zlib libcjson libprotobuf-c
CPPFLAGS += -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DTM_VERSION='"$(VERSION)"' \
	-iquote core -Ibuild/gen
CFLAGS += -std=c11 -g -Wall -Wextra -Wno-unused-parameter -Wshadow \
	-Wstrict-prototypes -MMD -MP $(XFLAGS) \
	$(shell $(PKG_CONFIG) --cflags fuse3 $(PKGS_CORE) 2>/dev/null)
# libarchive is opened with dlopen on first use (core/container/la.h says why), not
# linked: its headers come from PKGS_CORE, its soname (as -larchive would
# record it) is looked up when core/container/la.c is compiled.
CORE_LIBS = $(shell $(PKG_CONFIG) --libs $(filter-out libarchive,$(PKGS_CORE)) 2>/dev/null) -ldl -lpthread -lm
LIBARCHIVE_SONAME = $(shell objdump -p "$$($(PKG_CONFIG) --variable=libdir libarchive)/libarchive.so" 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }')
$(BUILD)/obj/core/container/la.o: CPPFLAGS += $(if $(LIBARCHIVE_SONAME),-DTM_LIBARCHIVE='"$(LIBARCHIVE_SONAME)"')
FUSE_LIBS = $(shell $(PKG_CONFIG) --libs fuse3 2>/dev/null)
LDFLAGS += $(XFLAGS)

PROTOS := $(wildcard protos/*.proto)
GEN_C := $(patsubst protos/%.proto,build/gen/%.pb-c.c,$(PROTOS))
GEN_H := $(GEN_C:.c=.h)
# Named field numbers for the hand-written wire-level code (STYLE.md,
# "Protobuf in C"): F_<Message>_<field>, from each .proto.
GEN_FIELDS := $(patsubst protos/%.proto,build/gen/%_fields.h,$(PROTOS))
# core/ is a tree of layers and formats (README, "Layout"): every .c in it.
CORE_SRC := $(shell find core -name '*.c' | LC_ALL=C sort)
FS_SRC := $(wildcard fs/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
TOOL_SRC := $(wildcard tests/tools/*.c)

CORE_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRC)) \
	$(patsubst build/gen/%.c,$(BUILD)/obj/gen/%.o,$(GEN_C))
FS_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(FS_SRC))
CORE_LIB := $(BUILD)/libtmcore.a
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FUZZREG_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/%-regress,$(FUZZ_SRC))
TOOL_BIN := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(TOOL_SRC))

.PHONY: all deps fuzz-deps bins regress check demo fuzz bench interop golden install clean
.DEFAULT_GOAL := all

all: tracemount

# Phony, so that the link always names this build's binary: as a file it
# was up to date whenever it pointed at a newer one, and after `make SAN=1`
# a plain `make` (and `make bench`) kept running the sanitizer build.
.PHONY: tracemount
tracemount: $(BUILD)/tracemount
	ln -sfn $(BUILD)/tracemount tracemount

bins: $(BUILD)/tracemount $(UNIT_BIN) $(FUZZREG_BIN) $(TOOL_BIN)

# the unit tests and the fuzz targets' replays alone (make check's clang build)
regress: $(BUILD)/tracemount $(UNIT_BIN) $(FUZZREG_BIN)

$(BUILD)/tracemount: $(FS_OBJ) $(CORE_LIB)
	$(CC) $(LDFLAGS) -o $@ $(FS_OBJ) $(CORE_LIB) $(FUSE_LIBS) $(CORE_LIBS)

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/%.o: %.c | $(GEN_H) $(GEN_FIELDS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/gen/%.o: build/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-shadow -Wno-strict-prototypes -c -o $@ $<

build/gen/%.pb-c.c build/gen/%.pb-c.h: protos/%.proto
	@mkdir -p build/gen
	protoc-c --proto_path=protos --c_out=build/gen $<

# The headers are made as a side effect of the rule above: without this,
# make deleted them as intermediate files after the first build of a clean
# clone, and `make fuzz`, which compiles the sources directly, failed.
.SECONDARY: $(GEN_C) $(GEN_H)

# Through a temporary file: a generator that fails (it does, loudly, when it
# finds no field or cannot read a statement) leaves no header behind.
build/gen/%_fields.h: protos/%.proto protos/fieldnums.awk
	@mkdir -p build/gen
	awk -f protos/fieldnums.awk $< >$@.tmp && mv $@.tmp $@ || { rm -f $@.tmp; exit 1; }

$(BUILD)/tests/%: tests/unit/%.c $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit -o $@ $< $(CORE_LIB) $(CORE_LIBS)

# `make fuzz`: each target runs FUZZ_SECONDS; a crash stops with the input
# saved as build/fuzz/<target>-crash-*; keep it in tests/fuzz/regress/<target>/
# so `make check` replays it for ever.
# Fuzz targets built with a plain driver: `make check` replays the kept
# crashers and seed corpus through them under the sanitizers.
$(BUILD)/tests/%-regress: tests/fuzz/%.c tests/fuzz/driver.c $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/driver.c $(CORE_LIB) $(CORE_LIBS)

$(BUILD)/tools/%: tests/tools/%.c $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(CORE_LIB) $(CORE_LIBS)

deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' \
			|| missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install:$$missing" >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

fuzz-deps:
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(FUZZ_PKGS)"

# The reference binary for the interop comparison (never built here).
TRACE_PROCESSOR_SHELL ?=
export TRACE_PROCESSOR_SHELL
# Without TRACE_PROCESSOR_SHELL, make check takes the reference of the
# shared folder beside the repository (a gzip'd trace_processor_shell),
# unpacked outside the repository with the Debian libraries it links, so
# that CI compares too (tests/tools/reference.sh; skipped, and said so,
# where it is missing or does not start).
REFERENCE_GZ ?= $(abspath ../shared/reference/trace_processor_shell.gz)
REFERENCE_DIR ?= $(or $(TMPDIR),/tmp)/tracemount-reference-$(shell id -u)
REF_PKGS := libprotobuf32 libre2-9 libzstd1 libexpat1

check: deps
	$(MAKE) --no-print-directory bins tracemount
	$(MAKE) --no-print-directory SAN=1 bins
	$(MAKE) --no-print-directory SAN=thread bins
	@rm -f build/clang/tracemount; \
	if $(MAKE) --no-print-directory fuzz-deps >&2 && command -v clang >/dev/null; then \
		$(MAKE) --no-print-directory SAN=clang regress; \
	else echo "make check: no clang here, so no clang build: tests/run.sh skips it, and says so" >&2; fi
	@tp="$(TRACE_PROCESSOR_SHELL)"; \
	if [ -z "$$tp" ] && [ -f "$(REFERENCE_GZ)" ]; then \
		$(MAKE) --no-print-directory deps DEB_PKGS="$(REF_PKGS)" >&2 || true; \
		tp=$$(tests/tools/reference.sh "$(REFERENCE_GZ)" "$(REFERENCE_DIR)"); \
	fi; \
	echo "TRACE_PROCESSOR_SHELL=$$tp tests/run.sh build/rel build/san build/tsan build/clang"; \
	TRACE_PROCESSOR_SHELL=$$tp tests/run.sh build/rel build/san build/tsan build/clang

demo: deps
	$(MAKE) --no-print-directory tracemount
	tests/demo.sh ./tracemount testdata/demo/demo.zip

FUZZ_SECONDS ?= 30
fuzz: deps fuzz-deps $(GEN_C) $(GEN_H) $(GEN_FIELDS)
	@mkdir -p build/fuzz
	@for f in $(FUZZ_SRC); do \
		n=$$(basename $$f .c); \
		echo "== $$n"; \
		clang $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
			$$(pkg-config --cflags $(PKGS_CORE)) -o build/fuzz/$$n $$f $(CORE_SRC) $(GEN_C) \
			$(CORE_LIBS) || exit 1; \
		mkdir -p build/fuzz/corpus-$$n; \
		seeds=$$(for d in tests/fuzz/corpus/$$n tests/fuzz/regress/$$n; do [ -d $$d ] && echo $$d; done); \
		build/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
			-artifact_prefix=build/fuzz/$$n- build/fuzz/corpus-$$n $$seeds || exit 1; \
	done

# Record every output of every fixture archive again (tests/t_golden.sh):
# only for an output changed on purpose, said so in the commit.
golden: deps
	$(MAKE) --no-print-directory bins tracemount
	GOLDEN_UPDATE=1 BUILD=build/rel TRACEMOUNT=build/rel/tracemount bash tests/t_golden.sh

interop: deps
	$(MAKE) --no-print-directory bins tracemount
	@[ -n "$(TRACE_PROCESSOR_SHELL)" ] || { echo "make interop: set TRACE_PROCESSOR_SHELL=/path/to/trace_processor_shell" >&2; exit 2; }
	tests/interop/run.sh build/rel

bench: deps
	$(MAKE) --no-print-directory tracemount
	tests/bench/run.sh

install: tracemount
	install -D -m 0755 $(BUILD)/tracemount $(DESTDIR)$(PREFIX)/bin/tracemount
	install -D -m 0644 man/tracemount.1 $(DESTDIR)$(PREFIX)/share/man/man1/tracemount.1

clean:
	rm -rf build tracemount

-include $(shell find build -name '*.d' 2>/dev/null)
