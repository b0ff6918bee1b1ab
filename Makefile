# SPDX-License-Identifier: GPL-2.0
#
# luf: the module is built by Kbuild (top-level Kbuild file); this Makefile
# only drives it and the test scripts.
#   make             build luf.ko against KDIR
#   make check       kernel + module + selftests + boot + results (scripts/check.sh)
#                    for x86_64 and arm64, one combined verdict; LUF_ARCH=x86_64
#                    (or arm64) make check: that one only
#   make demo        the shootdown demo (scripts/demo.sh)
#   make shell       build, then an interactive guest shell
#   make run FILE=prog [ARGS='a b']   run your own static binary or sh script
#                    in the guest; exits with its exit status
#   make kernel      build (or find cached) the patched kernel
#   make clean       remove module build products and out/ (keeps out/*/kdir)
# LUF_ARCH=x86_64 (default) or arm64 (cross-built, booted in qemu-system-aarch64)
# selects the architecture for every target.
# KDIR defaults to the cached tree named in out/$(LUF_ARCH)/kdir, else to
# /lib/modules/$(uname -r)/build.

LUF_ARCH ?= x86_64
export LUF_ARCH
KDIR ?= $(or $(shell cat out/$(LUF_ARCH)/kdir 2>/dev/null),/lib/modules/$(shell uname -r)/build)
ifeq ($(LUF_ARCH),arm64)
KARGS := ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
endif

.PHONY: all modules clean check demo shell run kernel

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(KARGS) modules

clean:
	if [ -d $(KDIR) ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) $(KARGS) clean; fi
	find out -mindepth 2 -maxdepth 2 ! -name kdir -exec rm -rf {} + 2>/dev/null || true

# Both architectures unless LUF_ARCHES, or LUF_ARCH set by the caller,
# names them.
CHECK_ARCHES := $(or $(LUF_ARCHES),$(if $(filter file,$(origin LUF_ARCH)),x86_64 arm64,$(LUF_ARCH)))
check:
	LUF_ARCHES="$(CHECK_ARCHES)" scripts/check.sh

demo:
	scripts/demo.sh

shell:
	scripts/kernel.sh
	scripts/module.sh
	scripts/selftests.sh
	scripts/initramfs.sh
	scripts/qemu.sh shell

run:
	@test -n "$(FILE)" || { echo "usage: make run FILE=path [ARGS='...']" >&2; exit 2; }
	scripts/run.sh "$(FILE)" $(ARGS)

kernel:
	scripts/kernel.sh
