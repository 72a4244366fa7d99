# ksmenable: libksmenable.so (LD_PRELOAD library) and ksm-run (launcher).
#
#   make                      build with $(CC) into build/$(CC)/
#   make CC=musl-gcc          the same library against musl, into build/musl-gcc/
#   make check                build and run the whole test suite (root, real kernel)
#   make bench                the benchmark (not part of check)
#   make install PREFIX=/usr DESTDIR=/tmp/stage ; make uninstall
#
# WERROR=1 (used by CI) turns warnings into errors; distributions leave it off.

VERSION   := 0.1.0
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
LIBDIR    ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR    ?= $(PREFIX)/share/man

CC        ?= cc
O         ?= build/$(notdir $(CC))
CFLAGS    ?= -O2 -g
WARN      := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
ifeq ($(WERROR),1)
WARN      += -Werror
endif
CPPFLAGS  += -D_GNU_SOURCE -Iinclude -Ipreload -DKSMENABLE_LIBDIR='"$(LIBDIR)"'
ALL_CFLAGS = $(WARN) -std=c11 -fPIC -fvisibility=hidden -pthread $(CFLAGS)

LIB_SRCS  := $(wildcard preload/*.c)
LIB_OBJS  := $(LIB_SRCS:%.c=$(O)/%.o)
LIB       := $(O)/libksmenable.so

RUN_SRCS  := $(wildcard launcher/*.c)
RUN_OBJS  := $(RUN_SRCS:%.c=$(O)/%.o)
RUN       := $(if $(RUN_SRCS),$(O)/ksm-run)

# Test programs: built with $(CC), so a musl build gets musl test programs.
PROG_SRCS := $(wildcard tests/progs/*.c)
PROGS     := $(PROG_SRCS:tests/progs/%.c=$(O)/tests/%)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNITS     := $(UNIT_SRCS:tests/unit/%.c=$(O)/unit/%)
# The fault injector needs libseccomp, which musl's wrapper hides: it is
# always built with the host compiler.
HOSTCC    ?= cc
FAULT     := build/host/faultinject

MANPAGES  := $(wildcard man/*.[1-8])

.PHONY: all check unit musl progs bench install uninstall clean lint-man
all: $(LIB) $(RUN)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MD -MP -c -o $@ $<

$(LIB): $(LIB_OBJS) preload/libksmenable.map
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libksmenable.so \
		-Wl,--version-script=preload/libksmenable.map -o $@ $(LIB_OBJS) -ldl

# ksm-run reads maps and judges regions with the library's own parsers.
SHARED_OBJS := $(addprefix $(O)/preload/,maps.o selector.o advise.o config.o ksmstat.o)
$(O)/ksm-run: $(RUN_OBJS) $(SHARED_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(RUN_OBJS) $(SHARED_OBJS)

$(O)/tests/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -std=c11 -O1 -g -pthread -o $@ $<

# Programs named linked_*.c link the library instead of preloading it.  The
# run path is absolute: under secure execution the loader ignores $ORIGIN.
$(O)/tests/linked_%: tests/progs/linked_%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -std=c11 -O1 -g -pthread -o $@ $< -L$(O) -lksmenable -Wl,-rpath,$(abspath $(O))

# Unit tests link the parsers' objects directly (hidden symbols included).
UNIT_OBJS := $(addprefix $(O)/preload/,maps.o selector.o config.o advise.o log.o ksmstat.o)
$(O)/unit/%: tests/unit/%.c $(UNIT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -std=c11 -pthread $(CFLAGS) $(LDFLAGS) -o $@ $< $(UNIT_OBJS)

$(FAULT): tests/helpers/faultinject.c tests/helpers/errnames.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(CPPFLAGS) $(WARN) -std=c11 -O1 -g -o $@ $< -lseccomp

unit: $(UNITS)
	@for t in $(UNITS); do echo "unit: $$t"; $$t || exit 1; done

# The musl build of the library and test programs, used by tests/*musl*.bats.
musl:
	$(MAKE) CC=musl-gcc O=build/musl-gcc all progs

progs: $(PROGS)

lint-man:
	mandoc -Tlint -Wwarning $(MANPAGES)

# The suite changes system-wide KSM knobs: one run at a time on a machine.
check: deps all progs unit $(FAULT) lint-man
	@if command -v musl-gcc >/dev/null; then $(MAKE) --no-print-directory musl; fi
	@{ KSMENABLE_BUILD=$(O) flock /run/lock/ksmenable-tests.lock bats tests/; echo $$? >$(O)/check.status; } \
		| tee $(O)/check.tap
	@echo "check: $$(grep -c '^ok' $(O)/check.tap) passed, $$(grep -c '^not ok' $(O)/check.tap) failed"
	@exit $$(cat $(O)/check.status)

# Benchmark programs, built only for make bench.  empty.so is a preload
# library that does nothing: the floor any LD_PRELOAD costs.
BENCH_SRCS := $(filter-out tests/bench/empty.c,$(wildcard tests/bench/*.c))
BENCHES   := $(BENCH_SRCS:tests/bench/%.c=$(O)/bench/%) $(O)/bench/empty.so

$(O)/bench/%: tests/bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -std=c11 -O2 -g -pthread -o $@ $< -ldl

$(O)/bench/empty.so: tests/bench/empty.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -std=c11 -O2 -fPIC -shared -o $@ $<

# The library's costs, then ksm-run's tuning, then --estimate's accuracy and
# speed (the last two set KSM knobs for a while and put them back).
bench: all progs $(BENCHES)
	KSMENABLE_BUILD=$(O) flock /run/lock/ksmenable-tests.lock tests/bench/run
	KSMENABLE_BUILD=$(O) flock /run/lock/ksmenable-tests.lock tests/bench/ksm-run-bench
	KSMENABLE_BUILD=$(O) flock /run/lock/ksmenable-tests.lock tests/bench/estimate-accuracy

# --- The newcomer's commands: make deps (check's first step) and make demo ---
# deps: what the suite needs beyond make and a C compiler; as root on
# Debian/Ubuntu it installs what is missing, otherwise it says what to install.
.PHONY: deps demo
deps:
	@tests/install-deps
# Under -j too, what needs those packages waits for them.
ifneq ($(filter check,$(MAKECMDGOALS)),)
$(FAULT) lint-man: | deps
endif

# demo: pre-fork workers holding the same cache, run under ksm-run, which
# tunes ksmd, restores the knobs and reports what merged (root, KSM built in).
# DEMO_KSM is only where the checks look (a test points it elsewhere).
DEMO     := $(O)/tests/demo_workers
DEMO_KSM ?= /sys/kernel/mm/ksm
demo:
	@if [ "$$(id -u)" != 0 ]; then echo "make demo: needs root: ksm-run writes the KSM knobs in /sys/kernel/mm/ksm (run: sudo make demo)" >&2; exit 1; fi
	@if [ ! -d $(DEMO_KSM) ]; then echo "make demo: this kernel has no KSM ($(DEMO_KSM) is missing): it needs a kernel built with CONFIG_KSM=y" >&2; exit 1; fi
	@if [ ! -w $(DEMO_KSM)/run ]; then echo "make demo: $(DEMO_KSM)/run is not writable (a container with a read-only /sys?): run it on the host" >&2; exit 1; fi
	@$(MAKE) -s --no-print-directory all $(DEMO)
	@flock -n /run/lock/ksmenable-tests.lock true || echo "make demo: waiting for the lock on the KSM knobs (/run/lock/ksmenable-tests.lock): a test run is going on" >&2
	flock /run/lock/ksmenable-tests.lock $(RUN) -- $(DEMO)

# --- Shell completion for ksm-run (launcher/completion/) ---
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
.PHONY: install-completion uninstall-completion
install: install-completion
uninstall: uninstall-completion
install-completion:
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 644 launcher/completion/ksm-run.bash $(DESTDIR)$(BASHCOMPDIR)/ksm-run
	install -m 644 launcher/completion/_ksm-run $(DESTDIR)$(ZSHCOMPDIR)/_ksm-run
uninstall-completion:
	rm -f $(DESTDIR)$(BASHCOMPDIR)/ksm-run $(DESTDIR)$(ZSHCOMPDIR)/_ksm-run

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(LIB) $(DESTDIR)$(LIBDIR)/libksmenable.so
	install -m 644 include/ksmenable.h $(DESTDIR)$(INCLUDEDIR)/ksmenable.h
	install -m 644 man/libksmenable.7 $(DESTDIR)$(MANDIR)/man7/libksmenable.7
	if [ -n "$(RUN)" ]; then install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 && \
		install -m 755 $(RUN) $(DESTDIR)$(BINDIR)/ksm-run && \
		install -m 644 man/ksm-run.1 $(DESTDIR)$(MANDIR)/man1/ksm-run.1; fi

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libksmenable.so $(DESTDIR)$(INCLUDEDIR)/ksmenable.h \
		$(DESTDIR)$(MANDIR)/man7/libksmenable.7 $(DESTDIR)$(BINDIR)/ksm-run \
		$(DESTDIR)$(MANDIR)/man1/ksm-run.1

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(RUN_OBJS:.o=.d)
