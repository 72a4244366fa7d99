# tests/bench/guests.bash - the booting QEMU guests of the benchmarks
# (guest-bench, estimate-vs-ksm): TCG guests of Debian's kernel, each with a
# busybox initramfs whose /init mounts tmpfs, fills it with the same
# FILL_MIB of data (pages distinct within a guest, equal across guests),
# says so on its console, then idles.  Source it; it defines functions only.
#
# Inputs (set by the caller): UNPACKED (where tests/install-deps unpacks
# packages), WORK (a temporary directory of the caller's), NGUESTS,
# FILL_MIB, MEM_MIB; optional GUEST_QEMU_EXTRA (more QEMU options, such as
# "-machine mem-merge=off").
#
#   guests_find_kernel   sets VMLINUZ (BENCH_GUEST_KERNEL, /boot/vmlinuz-*,
#                        or one unpacked under $UNPACKED/linux-image-amd64)
#   guests_missing NAME  prints what is missing and how to get it, and
#                        returns 1; 0 when everything is there
#   make_kernel          sets KERNEL: the vmlinuz's vmlinux, or the vmlinuz
#   make_initramfs       $WORK/initramfs.cpio
#   guests_cmd           the shell command that starts the guests and waits
#                        (guest i's console goes to $WORK/console.i)
#   guest_filled I       guest I's console says it filled its memory

guests_find_kernel() {
	local f
	VMLINUZ=${BENCH_GUEST_KERNEL:-}
	[ -z "$VMLINUZ" ] || return 0
	for f in /boot/vmlinuz-* "$UNPACKED"/linux-image-amd64/boot/vmlinuz-*; do [ ! -e "$f" ] || VMLINUZ=$f; done
}

guests_missing() { # NAME (of the script, for its messages)
	local missing=
	command -v qemu-system-x86_64 >/dev/null || missing+=" qemu-system-x86"
	[ -x /bin/busybox ] || missing+=" busybox-static"
	[ -n "$VMLINUZ" ] && [ -e "$VMLINUZ" ] || missing+=" linux-image-amd64"
	command -v python3 >/dev/null || missing+=" python3"
	[ -n "$missing" ] || return 0
	echo "$1: skipped: needs the Debian packages$missing: apt-get install qemu-system-x86"
	echo "   busybox-static; for the kernel, without installing it (its hooks would update the boot loader):"
	echo "   cd \$(mktemp -d) && apt-get download \$(apt-cache depends linux-image-amd64 | sed -n 's/^  Depends: //p')"
	echo "   && dpkg-deb -x linux-image-*.deb $UNPACKED/linux-image-amd64"
	return 1
}

# The kernel image's xz payload, unpacked: QEMU boots the ELF vmlinux
# through its PVH entry, without the decompressor (slow under TCG).  The xz
# magic may also occur by chance before the real stream: each offset is
# tried until one unpacks into an ELF file.  Else the vmlinuz as it is.
make_kernel() {
	local off
	while IFS=: read -r off _; do
		tail -c +$((off + 1)) "$VMLINUZ" | xz -dc --single-stream >"$WORK/vmlinux" 2>/dev/null || true
		[ "$(head -c 4 "$WORK/vmlinux")" = $'\x7fELF' ] && { KERNEL=$WORK/vmlinux; return 0; }
	done < <(grep -aboF $'\xfd7zXZ' "$VMLINUZ" 2>/dev/null)
	rm -f "$WORK/vmlinux"
	KERNEL=$VMLINUZ
}

# FILL_MIB of pages, each its number and then one of four fixed pseudo-random
# pages (seed 20): distinct within a guest, the same in every guest, and
# gzip finds each page's body 16 KiB back, so the archive stays small.
# shellcheck disable=SC2016 # for the guest's shell
guest_init='#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t tmpfs -o size=@SIZE@m tmpfs /data
echo "guest-bench: booted at $(cut -d" " -f1 /proc/uptime) s"
gunzip -c /fill.gz >/data/fill
rm /fill.gz
echo "guest-bench: filled $(($(stat -c %s /data/fill) >> 20)) MiB at $(cut -d" " -f1 /proc/uptime) s"
while :; do sleep 3600; done'

make_initramfs() {
	local root=$WORK/root
	mkdir -p "$root/bin" "$root/proc" "$root/dev" "$root/data"
	cp /bin/busybox "$root/bin/busybox"
	python3 - "$FILL_MIB" "$root/fill.gz" <<-'PY'
		import gzip, random, sys
		mib, out = int(sys.argv[1]), sys.argv[2]
		rnd = random.Random(20)
		bodies = [rnd.randbytes(4096) for _ in range(4)]
		with gzip.open(out, "wb", compresslevel=6) as f:
		    for i in range(mib * 256):
		        head = b"guest-bench page %010d\n" % i
		        f.write(head + bodies[i % 4][len(head):])
	PY
	printf '%s\n' "${guest_init//@SIZE@/$((FILL_MIB + 16))}" >"$root/init"
	chmod 755 "$root/init"
	(cd "$root" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) >"$WORK/initramfs.cpio"
	rm -rf "$root"
}

# The shell command that starts the guests and waits for them.
guests_cmd() {
	local i cmd=
	for ((i = 1; i <= NGUESTS; i++)); do
		cmd+="qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m $MEM_MIB -nographic -monitor none"
		cmd+=" -nic none -no-reboot -kernel '$KERNEL' -initrd '$WORK/initramfs.cpio' ${GUEST_QEMU_EXTRA:-}"
		cmd+=" -append 'console=ttyS0 quiet panic=-1' -serial 'file:$WORK/console.$i' </dev/null >/dev/null 2>&1 & "
	done
	echo "${cmd}wait"
}

guest_filled() { grep -qa 'guest-bench: filled' "$WORK/console.$1" 2>/dev/null; }
