# SPDX-License-Identifier: GPL-2.0
#
# deter: deterministic TCP record and replay.
#
#   make            bin/deter (userspace)
#   make kernel     the patched testbed kernel (FLAVOUR=default|debug), cached
#                   under $(DETER_CACHE) (default ~/.cache/deter)
#   make kmod       deter.ko and deter_kunit.ko against KDIR (default: that kernel)
#   make check      set-up + every test: unit, bats, lint, VM suite (KUnit, netns)
#   make check-debug the VM suite on the debug kernel (KASAN, lockdep, kmemleak)
#   make check-debug-ci  its fixed part (tests/check.sh --debug vm-debug)
#   make check-apps      every real-application scenario (tests/apps)
#   make check-nic       the NIC topology's scenarios (tests/check.sh vm-nic)
#   make demo       set-up + the testbed demo
#   make install    bin/deter to $(PREFIX)/bin, deter.ko to KDIR's module dir
#   make deps       install the Debian packages the above need

PREFIX ?= /usr/local
FLAVOUR ?= default
export FLAVOUR

CC ?= gcc
PKGS := libnetfilter_queue libmnl libzstd libtraceevent libtracefs
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS ?= -O2 -g
CPPFLAGS += -Iinclude -Ilog -Irecorder -Ireplay -D_GNU_SOURCE
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(PKGS))

B := build
# The shared library (log/): the log format, the log directory's index,
# and deter_err.o, through which every subcommand's messages go.
ERR_OBJS := $(B)/log/deter_err.o
# Modules unit tests link without a main().
LOG_OBJS := $(addprefix $(B)/log/,rec_err.o rec_varint.o rec_codec.o rec_enc.o \
	      rec_dec.o rec_write.o rec_read.o rec_rewrite.o rec_names.o \
	      rec_sysctl.o rec_index.o rec_edge.o)
REC_OBJS := $(LOG_OBJS) \
	    $(B)/recorder/rec_conn.o $(B)/recorder/rec_trace.o \
	    $(B)/recorder/rec_keep.o
# The recording side's subcommands.
REC_CMD_OBJS := $(B)/recorder/rec_cli.o $(B)/recorder/rec_record.o \
		$(B)/recorder/rec_ls.o $(B)/recorder/rec_show.o \
		$(B)/recorder/rec_compact.o
CORR_OBJS := $(B)/replay/corrector.o
REPLAY_OBJS := $(B)/replay/replay_script.o $(B)/replay/replay_kmod.o \
	       $(B)/replay/replay_net.o $(B)/replay/replay_gen.o \
	       $(B)/replay/replay_pcap.o $(CORR_OBJS)
# The replay subcommand.
REPLAY_CMD_OBJS := $(B)/replay/replay_main.o $(B)/replay/replay_run.o \
		   $(B)/replay/replay_child.o $(B)/replay/replay_capture.o \
		   $(B)/replay/replay_vm.o
DETER_OBJS := $(B)/cli/deter_main.o $(ERR_OBJS) $(REC_OBJS) $(REC_CMD_OBJS) \
	      $(REPLAY_CMD_OBJS) $(REPLAY_OBJS)
UNIT_TESTS := $(B)/tests/unit/rec_varint_test $(B)/tests/unit/rec_log_test $(B)/tests/unit/rec_write_test $(B)/tests/unit/rec_names_test \
	      $(B)/tests/unit/replay_script_test $(B)/tests/unit/rec_keep_test $(B)/tests/unit/rec_edge_test
TEST_TOOLS := $(B)/tests/netns/tcpwl $(B)/tests/netns/corrector_tool

# KDIR: a prepared 6.12 tree with patches/ applied; default the testbed kernel.
KDIR ?= $(shell testbed/kernel.sh tree 2>/dev/null)

.PHONY: all deps kernel kmod kmod-debug unit check check-apps check-nic check-debug check-debug-ci demo bench install clean lint

all: bin/deter

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(WARN) -pthread -MMD -MP -c -o $@ $<

# The library sees neither program's headers, and neither program the
# other's: only cli/, on top, includes both.
$(B)/log/%.o: CPPFLAGS := $(filter-out -Irecorder -Ireplay,$(CPPFLAGS))
$(B)/recorder/%.o: CPPFLAGS := $(filter-out -Ireplay,$(CPPFLAGS))
$(B)/replay/%.o: CPPFLAGS := $(filter-out -Irecorder,$(CPPFLAGS))

bin/deter: $(DETER_OBJS)
	@mkdir -p bin
	$(CC) $(CFLAGS) -pthread -o $@ $^ $(PKG_LIBS)

$(B)/tests/unit/%_test: $(B)/tests/unit/%_test.o $(ERR_OBJS) $(REC_OBJS) $(REPLAY_OBJS)
	$(CC) $(CFLAGS) -pthread -o $@ $^ $(PKG_LIBS)

$(B)/tests/unit/%.o: CPPFLAGS += -Itests/unit

$(B)/tests/netns/corrector_tool: $(B)/tests/netns/corrector_tool.o $(B)/replay/corrector.o
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS)

$(B)/tests/netns/tcpwl: $(addprefix $(B)/tests/netns/,tcpwl.o tcpwl_run.o tcpwl_sock.o tcpwl_io.o)
	$(CC) $(CFLAGS) -o $@ $^

$(B)/tests/netns/%: $(B)/tests/netns/%.o
	$(CC) $(CFLAGS) -o $@ $^

unit: $(UNIT_TESTS) $(TEST_TOOLS) $(B)/tests/fuzz/rec_log_fuzz

# libFuzzer target for the log decoder (clang), run by make check.
$(B)/tests/fuzz/rec_log_fuzz: tests/fuzz/rec_log_fuzz.c $(addprefix log/,rec_dec.c \
			       rec_codec.c rec_varint.c rec_err.c)
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined $(WARN) -o $@ $^ -lzstd

deps:
	scripts/install-deps.sh

kernel:
	testbed/kernel.sh build

kmod:
	@test -n "$(KDIR)" || { echo "make: no kernel tree: run 'make kernel' or pass KDIR=/path/to/linux-6.12" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# deter.ko for the debug kernel, built from a copy of the module's
# sources under $(B)/kmod-debug so that it does not replace ./deter.ko.
DEBUG_KDIR = $(shell FLAVOUR=debug testbed/kernel.sh tree 2>/dev/null)
KMOD_SRCS := Kbuild $(wildcard kmod/*.[ch] include/*.h tests/kunit/*.[ch])

kmod-debug:
	@test -n "$(DEBUG_KDIR)" || { echo "make: no debug kernel tree: run 'make kernel FLAVOUR=debug'" >&2; exit 1; }
	@mkdir -p $(B)/kmod-debug
	@tar cf - $(KMOD_SRCS) | tar xf - -C $(B)/kmod-debug
	$(MAKE) -C $(DEBUG_KDIR) M=$(CURDIR)/$(B)/kmod-debug modules

lint:
	tests/lint.sh

check: deps
	$(MAKE) all unit
	$(MAKE) kernel
	$(MAKE) kmod
	tests/check.sh

check-debug: deps
	$(MAKE) all unit
	$(MAKE) kernel FLAVOUR=debug
	$(MAKE) kmod-debug
	tests/check.sh --debug vm vm2 vm-traced

check-apps: deps
	$(MAKE) all unit
	$(MAKE) kernel
	$(MAKE) kmod
	tests/check.sh vm-apps-all

check-nic: deps
	$(MAKE) all unit
	$(MAKE) kernel
	$(MAKE) kmod
	tests/check.sh vm-nic

check-debug-ci: deps
	$(MAKE) all unit
	$(MAKE) kernel FLAVOUR=debug
	$(MAKE) kmod-debug
	tests/check.sh --debug vm-debug

demo: deps
	$(MAKE) all $(TEST_TOOLS)
	$(MAKE) kernel
	$(MAKE) kmod
	tests/demo.sh

install: all
	install -D -m 0755 bin/deter $(DESTDIR)$(PREFIX)/bin/deter
	@if [ -n "$(KDIR)" ] && [ -f deter.ko ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install; \
	else echo "make: deter.ko not built (make kmod); installed bin/deter only"; fi

clean:
	rm -rf $(B) bin
	@if [ -n "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# The guest-instruction counter (a QEMU plugin, host side) and its marker
# (static, run in the guest).
$(B)/tests/bench/insns.so: tests/bench/insns.c tests/bench/insnmark.h tests/bench/qemu_plugin_api.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -o $@ $<

$(B)/tests/bench/profile.so: tests/bench/profile.c tests/bench/insnmark.h tests/bench/qemu_plugin_api.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -o $@ $<

$(B)/tests/bench/insnmark: tests/bench/insnmark.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -static -o $@ $<

bench: deps
	$(MAKE) all unit $(B)/tests/bench/insns.so $(B)/tests/bench/profile.so \
		$(B)/tests/bench/insnmark $(B)/tests/bench/planes
	$(MAKE) kernel
	$(MAKE) kmod
	tests/bench/figures.sh
