# SPDX-License-Identifier: GPL-2.0
#
# luf: the module is built by Kbuild (top-level Kbuild file); this Makefile
# only drives it and the test scripts.
#   make             build luf.ko against KDIR
#   make check       kernel + module + selftests + boot + results (scripts/check.sh)
#                    for x86_64 and arm64, one combined verdict; LUF_ARCH=x86_64
#                    (or arm64) make check: that one only
#   make demo        the shootdown demo (scripts/demo.sh)
#   make bench       the benchmarks, LUF off vs on (scripts/bench.sh; not part
#                    of make check); LUF_SMP="2 4 8": a vCPU sweep
#   make bench-overhead  the hook layer's cost when unused: CONFIG_LUF_HOOKS=n
#                    vs hooked (luf.ko not loaded, loaded in observe mode),
#                    a second kernel build (scripts/bench-overhead.sh);
#                    LUF_OVERHEAD_CONFIG=prod: both kernels without the
#                    debugging options (two more builds)
#   make shell       build, then an interactive guest shell
#   make run CMD='cmd args'   run any host command line in the guest (the
#                    host's root read-only over 9p, luf.ko loaded); exits
#                    with its exit status.  DIR=dir: run in dir (a directory
#                    of the host; default: here)
#   make run FILE=prog [ARGS='a b']   run your own static binary or sh script
#                    from the initramfs
#   make kernel      build (or find cached) the patched kernel
#   make deb         the patched kernel as Debian packages (bindeb-pkg, Debian's
#                    config trimmed), out/deb/linux-{image,headers}-*-luf_*.deb
#   make dkms-deb    the luf-dkms package, out/deb/luf-dkms_VERSION_all.deb
#   make check-host  both installed, used and removed on a Debian 12 root:
#                    in a chroot, then booted with systemd under QEMU
#                    (LUF_ARCH's; not part of make check)
#   make clean       remove module build products and out/ (keeps out/*/kdir)
# LUF_ARCH=x86_64 (default) or arm64 (cross-built, booted in qemu-system-aarch64)
# selects the architecture for every target.
# KDIR defaults to the cached tree named in out/$(LUF_ARCH)/kdir, else to
# /lib/modules/$(uname -r)/build.

LUF_ARCH ?= x86_64
export LUF_ARCH
KDIR ?= $(or $(shell cat out/$(LUF_ARCH)/kdir 2>/dev/null),/lib/modules/$(shell uname -r)/build)
# ARCH= and CROSS_COMPILE= from the architecture table scripts/arch/$(LUF_ARCH)
KARGS := $(shell bash -c '. scripts/arch/$(LUF_ARCH) && echo ARCH=$$ARCH_KERNEL $${ARCH_CROSS:+CROSS_COMPILE=$$ARCH_CROSS}')

# CMD goes through the environment: quotes in it reach run.sh unchanged.
export LUF_RUN_CMD := $(value CMD)

.PHONY: all modules clean check demo bench bench-overhead shell run kernel deb dkms-deb check-host

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(KARGS) modules

clean:
	if [ -d $(KDIR) ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) $(KARGS) clean; fi
	rm -f .luf-kdir
	find out -mindepth 2 -maxdepth 2 ! -name kdir -exec rm -rf {} + 2>/dev/null || true

# Every architecture with a table in scripts/arch/ (x86_64 first) unless
# LUF_ARCHES, or LUF_ARCH set by the caller, names them.
ALL_ARCHES := $(notdir $(wildcard scripts/arch/*))
ALL_ARCHES := $(filter x86_64,$(ALL_ARCHES)) $(filter-out x86_64,$(ALL_ARCHES))
CHECK_ARCHES := $(or $(LUF_ARCHES),$(if $(filter file,$(origin LUF_ARCH)),$(ALL_ARCHES),$(LUF_ARCH)))
check:
	LUF_ARCHES="$(CHECK_ARCHES)" scripts/check.sh

demo:
	scripts/demo.sh

bench:
	LUF_SMP="$(LUF_SMP)" scripts/bench.sh

bench-overhead:
	scripts/bench-overhead.sh

shell:
	scripts/run.sh --shell

# make run CMD='command line' | DIR=dir [CMD=...] | FILE=prog [ARGS='a b']
run:
	@test -n "$(FILE)$(DIR)$$LUF_RUN_CMD" || { echo "usage: make run CMD='command line' | DIR=dir [CMD='...'] | FILE=path [ARGS='...']" >&2; exit 2; }
	scripts/run.sh $(if $(FILE),"$(FILE)" $(ARGS),$(if $(DIR),--dir "$(DIR)") $(if $(CMD),--cmd "$$LUF_RUN_CMD"))

kernel:
	scripts/kernel.sh

deb:
	scripts/deb.sh

dkms-deb:
	scripts/dkms-deb.sh

check-host:
	scripts/check-host.sh
