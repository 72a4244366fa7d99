#!/usr/bin/env bats
# Fleet evaluation: content fingerprints (--estimate --fingerprint) and
# what co-locating workloads would save (--combine, --matrix), checked
# against --estimate of the union, against real KSM, against the full
# figure for sampled fingerprints, and against the man page's SQL.
# ci: lock asan

load helpers
load launcher_helpers
load estimate_helpers

LAUNCHER_REQUIRES="root ksm jq"

setup_extra() {
	settle_ksm
	FP=$BATS_TEST_TMPDIR/fp
	mkdir -p "$FP"
}

# take SAMPLE FORMAT NAME=TARGET...: one ksm-run that fingerprints each
# TARGET apart, labelled NAME, into $FP/NAME.kfp (or .tsv).
take() {
	local sample=$1 format=$2 args=() t ext=kfp
	shift 2
	[ "$format" = tsv ] && ext=tsv
	for t in "$@"; do
		args+=(--estimate="${t#*=}" --label="${t%%=*}" --fingerprint="$FP/${t%%=*}.$ext")
	done
	run --separate-stderr "$KSM_RUN" "${args[@]}" --sample="$sample" --fingerprint-format="$format" --json \
		${TAKE_KEY:+--fingerprint-key="$TAKE_KEY"}
	[ "$status" = 0 ] || { echo "ksm-run: $status $stderr"; return 1; }
	TAKE_ERR=$stderr
}

# combine FILE...: --combine --json into $COMB.
combine() {
	run --separate-stderr "$KSM_RUN" --combine --json "$@"
	[ "$status" = 0 ] || { echo "ksm-run --combine: $status $stderr"; return 1; }
	COMB=$output
}

comb() { jq -r "$1" <<<"$COMB"; }

# refused STRING... -- ARG...: ksm-run ARG... exits 125, prints nothing on
# stdout, and says every STRING on stderr.
refused() {
	local want=()
	while [ "$1" != -- ]; do want+=("$1"); shift; done
	shift
	run --separate-stderr "$KSM_RUN" "$@"
	[ "$status" = 125 ] || { echo "ksm-run $*: status $status, stderr: $stderr"; return 1; }
	[ -z "$output" ] || { echo "ksm-run $*: printed on stdout: $output"; return 1; }
	for s in "${want[@]}"; do
		[[ $stderr == *"$s"* ]] || { echo "ksm-run $*: no '$s' in: $stderr"; return 1; }
	done
}

# within_bound SAMPLED FULL BOUND: |SAMPLED - FULL| <= BOUND, and the bound
# says something (0 < BOUND < FULL).
within_bound() {
	local s=$1 f=$2 b=$3 d
	d=$((s > f ? s - f : f - s))
	echo "sampled $s, full $f, bound $b"
	[ "$b" -gt 0 ] && [ "$b" -lt "$f" ] && [ "$d" -le "$b" ]
}

@test "fleet: bad options are refused with 125, naming the option, the text and what is accepted, before anything is read or written" {
	start_workload a -- "$PROGS/dupmem" mmap=2 wait
	local p before
	p=$(wl_pid a)
	before=$(knobs_snapshot)
	mkdir "$BATS_TEST_TMPDIR/cwd"
	cd "$BATS_TEST_TMPDIR/cwd"
	refused "--sample=0" "1..65536" -- --estimate="$p" --fingerprint=f.kfp --sample=0
	refused "--sample=abc" "1..65536" -- --estimate="$p" --fingerprint=f.kfp --sample=abc
	refused "--sample=-3" -- --estimate="$p" --fingerprint=f.kfp --sample=-3
	refused "--sample" "go with a fingerprint" -- --estimate="$p" --sample=16
	refused "--fingerprint is not an option of a command's run" "(--fingerprint goes with --estimate)" -- --fingerprint=f.kfp
	refused "--fingerprint=f.kfp" "goes after the --estimate=TARGET" -- --fingerprint=f.kfp --estimate="$p"
	refused "--label=web" "goes after the --estimate=TARGET" -- --label=web --estimate="$p" --fingerprint=f.kfp
	refused "--label=web" "add --fingerprint=FILE" -- --estimate="$p" --label=web
	refused "--label=" "not a label" "printable" -- --estimate="$p" --label=$'a\tb' --fingerprint=f.kfp
	refused "--label=web" "has a label already" -- --estimate="$p" --label=web --label=web --fingerprint=f.kfp
	refused "--fingerprint=/nonexistent-dir/f.kfp" "does not exist" -- --estimate="$p" --fingerprint=/nonexistent-dir/f.kfp
	refused "--fingerprint=f.kfp" "named twice" -- --estimate="$p" --fingerprint=f.kfp --estimate=1 --fingerprint=f.kfp
	refused "--fingerprint=g.kfp" "has a fingerprint already" -- --estimate="$p" --fingerprint=f.kfp --fingerprint=g.kfp
	refused "--fingerprint-format=xml" "accepted: binary, tsv" -- --estimate="$p" --fingerprint=f.kfp --fingerprint-format=xml
	refused "--fingerprint-format=tsv with --sample=16" "full resolution" -- --estimate="$p" --fingerprint=f.tsv \
		--fingerprint-format=tsv --sample=16
	refused "--fingerprint-per-cgroup=/nonexistent-dir" "an existing directory" -- --estimate="$p" --fingerprint-per-cgroup=/nonexistent-dir
	refused "--fingerprint-per-cgroup is not an option of --combine" -- --fingerprint-per-cgroup=. --combine f.kfp
	refused "--combine needs the fingerprints" -- --combine
	refused "--matrix" "two fingerprints or more" "f.kfp" -- --combine --matrix f.kfp
	refused "--matrix is not an option of --estimate" -- --estimate="$p" --matrix
	refused "--combine cannot be combined with --estimate" -- --estimate="$p" --combine f.kfp
	refused "--allow is not an option of --combine, which reads fingerprints only" -- --combine --allow=heap f.kfp
	# nothing was written, no knob changed
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/cwd")" ]
	[ "$(knobs_snapshot)" = "$before" ]
	# --help shows the new options
	run "$KSM_RUN" --help
	for o in --fingerprint= --label= --sample= --fingerprint-format=binary\|tsv --fingerprint-per-cgroup= \
		--combine --matrix; do
		[[ $output == *"$o"* ]] || { echo "no $o in --help"; return 1; }
	done
}

@test "fleet: two groups fingerprinted apart and combined give the estimate of both together exactly, and within 2% of real KSM" {
	requires prctl
	echo 0 >$KSM/run
	# Each group holds duplicates of its own; A and B share two sets of
	# contents.  (Seeds far apart: dupmem's distinct pages of seeds S and T
	# overlap where S ^ T is a small even number.)
	start_workload a1 -- "$PROGS/dupmem" merge=1 seed=7 distinct=8 unique=2 pairs=2 wait verify
	start_workload a2 -- "$PROGS/dupmem" merge=1 seed=0x900000000 distinct=4 mmap=2 zeros=1 wait verify
	start_workload b1 -- "$PROGS/dupmem" merge=1 seed=7 distinct=8 unique=2 wait verify
	start_workload b2 -- "$PROGS/dupmem" merge=1 seed=0x900000000 distinct=4 mmap=3 wait verify
	local A B real
	A=$(wl_pid a1),$(wl_pid a2)
	B=$(wl_pid b1),$(wl_pid b2)
	estimate "$A,$B"
	# each group in a run of its own
	take 1 binary "A=$A"
	take 1 binary "B=$B"
	combine "$FP/A.kfp" "$FP/B.kfp"
	echo "estimate: $(est pages_sharing) $(est pages_shared) $(est profit_bytes); union: $(comb .union.pages_sharing) $(comb .union.pages_shared) $(comb .union.general_profit)"
	[ "$(comb .union.pages_sharing)" = "$(est pages_sharing)" ]
	[ "$(comb .union.pages_shared)" = "$(est pages_shared)" ]
	[ "$(comb .union.zero_pages)" = "$(est zero_pages)" ]
	[ "$(comb .union.rmap_items)" = "$(est rmap_items)" ]
	[ "$(comb .union.general_profit)" = "$(est profit_bytes)" ]
	[ "$(comb .union.pages_sharing_bound)" = 0 ]
	# the co-location gain: at least the 3072 pages the groups share
	[ "$(comb .gain.pages_sharing)" -ge 3072 ]
	[ "$(comb .gain.pages_sharing)" = $(( $(comb .union.pages_sharing) - $(comb .alone.pages_sharing) )) ]
	# both groups in one run, fingerprinted apart: the same union
	take 1 binary "A=$A" "B=$B"
	combine "$FP/A.kfp" "$FP/B.kfp"
	[ "$(comb .union.pages_sharing)" = "$(est pages_sharing)" ]
	# each fingerprint alone is the estimate of its group alone
	estimate "$A"
	combine "$FP/A.kfp"
	[ "$(comb .union.pages_sharing)" = "$(est pages_sharing)" ]
	[ "$(comb .gain.pages_sharing)" = 0 ]
	# real KSM on both groups
	converge "$A,$B"
	real=$(own_ksm "$A,$B")
	real=${real%% *}
	combine "$FP/A.kfp" "$FP/B.kfp"
	echo "real KSM: $real pages_sharing"
	within_pct "$(comb .union.pages_sharing)" "$real" 2
}

@test "fleet: sampled fingerprints (1/16, 1/64) of known duplicate structures are within their stated bound of the full figure" {
	# One key for every run: which contents a sample keeps depends on the
	# keyed hash, so a fresh key each run made this a 3-sigma bet that
	# failed now and then (5055 against 6663 with a bound of 1605, once).
	TAKE_KEY=$FP/fixed.key
	printf '%s\n' 5f1e3a9c0b7d42e8a6c1f0d93b2e7a54 >"$TAKE_KEY"
	chmod 600 "$TAKE_KEY"
	start_workload a -- "$PROGS/dupmem" seed=0x300000000 distinct=16 unique=4 pairs=2 wait
	start_workload b -- "$PROGS/dupmem" seed=0x300000000 distinct=16 seed=0xb00000000 distinct=8 wait
	start_workload c -- "$PROGS/dupmem" seed=0xb00000000 distinct=8 unique=4 mmap=1 wait
	local n full full_ab
	take 1 binary "a=$(wl_pid a)" "b=$(wl_pid b)" "c=$(wl_pid c)"
	run --separate-stderr "$KSM_RUN" --combine --matrix --json "$FP"/{a,b,c}.kfp
	COMB=$output
	full=$(comb .union.pages_sharing)
	full_ab=$(comb '.pairs[] | select(.a == 0 and .b == 1) | .gain_pages')
	# a and b share 4096 contents, b and c 2048
	[ "$full_ab" -ge 4096 ]
	for n in 16 64; do
		take $n binary "a=$(wl_pid a)" "b=$(wl_pid b)" "c=$(wl_pid c)"
		run --separate-stderr "$KSM_RUN" --combine --matrix --json "$FP"/{a,b,c}.kfp
		COMB=$output
		[ "$(comb .sample)" = $n ]
		within_bound "$(comb .union.pages_sharing)" "$full" "$(comb .union.pages_sharing_bound)"
		within_bound "$(comb '.pairs[] | select(.a == 0 and .b == 1) | .gain_pages')" "$full_ab" \
			"$(comb '.pairs[] | select(.a == 0 and .b == 1) | .bound_pages')"
		# the text states the bound and what it is
		run "$KSM_RUN" --combine "$FP"/{a,b,c}.kfp
		[[ $output == *"+/- "* ]]
		[[ $output == *"3 standard errors"* ]]
	done
}

@test "fleet: sampled fingerprints of several python3 processes are within their stated bound of the full figure" {
	command -v python3 >/dev/null || skip_or_fail "no python3"
	cat >"$BATS_TEST_TMPDIR/load.py" <<-'EOF'
		import array, os, random, sys
		shared = random.Random(42).randbytes(24 << 20)     # the same in every process
		floats = array.array('d', range(1500000))           # the same too
		own = random.Random(os.getpid()).randbytes(8 << 20) # its own
		names = {str(i) * 3: i for i in range(100000)}      # pointers: mostly its own
		print("READY", os.getpid(), flush=True)
		sys.stdin.readline()
	EOF
	local i targets=() n full
	for i in 1 2 3 4; do
		start_workload "p$i" -- python3 "$BATS_TEST_TMPDIR/load.py"
		targets+=("p$i=$(wl_pid "p$i")")
	done
	take 1 binary "${targets[@]}"
	combine "$FP"/p{1,2,3,4}.kfp
	full=$(comb .union.pages_sharing)
	# the 24 MiB and the floats, merged three times over at least
	[ "$(comb .gain.pages_sharing)" -ge $(( 3 * (6100 + 2900) )) ]
	for n in 16 64; do
		take $n binary "${targets[@]}"
		combine "$FP"/p{1,2,3,4}.kfp
		within_bound "$(comb .union.pages_sharing)" "$full" "$(comb .union.pages_sharing_bound)"
	done
}

# rewrite OFFSET SIZE VALUE HOW SRC DST: SRC with the SIZE bytes at OFFSET
# set to VALUE (little-endian) and the checksum made right again (HOW crc),
# or with the byte at OFFSET flipped and the checksum left (HOW flip).
rewrite() {
	python3 - "$@" <<-'EOF'
		import sys, zlib
		off, size, value, how, src, dst = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
		b = bytearray(open(src, 'rb').read())
		if how == 'flip':
		    b[off] ^= 0xff
		else:
		    b[off:off + size] = value.to_bytes(size, 'little')
		    b[-4:] = zlib.crc32(bytes(b[:-4])).to_bytes(4, 'little')
		open(dst, 'wb').write(b)
	EOF
}

@test "fleet: corrupt, truncated, mismatched and other versions' fingerprints are refused with 125 and a clear message" {
	start_workload a -- "$PROGS/dupmem" seed=0x300000000 distinct=2 pairs=1 wait
	start_workload b -- "$PROGS/dupmem" seed=0x300000000 distinct=2 wait
	take 1 binary "a=$(wl_pid a)" "b=$(wl_pid b)"
	local a=$FP/a.kfp b=$FP/b.kfp size mps
	combine "$a" "$b"
	size=$(stat -c %s "$a")
	# the checksum is zlib's CRC-32 of all but the last 4 bytes, little-endian
	python3 -c 'import sys, zlib; b = open(sys.argv[1], "rb").read(); sys.exit(zlib.crc32(b[:-4]) != int.from_bytes(b[-4:], "little"))' "$a"
	head -c $((size - 1)) "$a" >"$FP/short.kfp"
	refused "$FP/short.kfp" "truncated" "$((size - 1)) bytes, the header says $size" -- --combine "$FP/short.kfp" "$b"
	head -c 60 "$a" >"$FP/header.kfp"
	refused "$FP/header.kfp" "truncated" -- --combine "$b" "$FP/header.kfp"
	{ cat "$a"; echo x; } >"$FP/long.kfp"
	refused "$FP/long.kfp" "bytes after the end" -- --combine "$FP/long.kfp"
	: >"$FP/empty.kfp"
	refused "$FP/empty.kfp" "not a ksm-run fingerprint" -- --combine "$FP/empty.kfp"
	echo "hash	pages" >"$FP/text.kfp"
	refused "$FP/text.kfp" "not a ksm-run fingerprint" -- --combine "$FP/text.kfp"
	refused "$FP/missing.kfp" "No such file" -- --combine "$FP/missing.kfp"
	# a byte of the body flipped: the checksum
	rewrite $((size - 10)) 1 0 flip "$a" "$FP/flipped.kfp"
	refused "$FP/flipped.kfp" "corrupt: checksum mismatch" -- --combine "$FP/flipped.kfp" "$b"
	# another version, another hash function
	rewrite 8 4 3 crc "$a" "$FP/v3.kfp"
	refused "$FP/v3.kfp" "format version 3; this ksm-run reads version 2" -- --combine "$b" "$FP/v3.kfp"
	rewrite 8 4 1 crc "$a" "$FP/v1.kfp"
	refused "$FP/v1.kfp" "format version 1, whose hashes are not keyed" "take it again" -- --combine "$FP/v1.kfp"
	rewrite 12 4 7 crc "$a" "$FP/hash7.kfp"
	refused "$FP/hash7.kfp" "hash function 7 is not known" -- --combine "$FP/hash7.kfp"
	# counts that contradict each other, with a right checksum
	rewrite 88 8 999999 crc "$a" "$FP/records.kfp"
	refused "$FP/records.kfp" "corrupt" -- --combine "$FP/records.kfp"
	rewrite 72 8 1 crc "$a" "$FP/sharing.kfp"
	refused "$FP/sharing.kfp" "corrupt: the records give pages_sharing" -- --combine "$FP/sharing.kfp"
	rewrite 20 4 0 crc "$a" "$FP/sample0.kfp"
	refused "$FP/sample0.kfp" "corrupt: sampling 1/0" -- --combine "$FP/sample0.kfp"
	# fingerprints that cannot be combined
	rewrite 16 4 16384 crc "$a" "$FP/page16k.kfp"
	refused "$a and $FP/page16k.kfp cannot be combined: page sizes 4096 and 16384 differ" -- \
		--combine "$a" "$FP/page16k.kfp"
	mps=$(cat $KSM/max_page_sharing)
	rewrite 24 4 $((mps * 2)) crc "$a" "$FP/mps2.kfp"
	refused "cannot be combined: max_page_sharing $mps and $((mps * 2)) differ" -- --combine "$a" "$FP/mps2.kfp"
	take 16 binary "s=$(wl_pid b)"
	refused "$a and $FP/s.kfp cannot be combined: sampling 1/1 and 1/16 differ" -- --combine "$a" "$FP/s.kfp"
	# TSV is for SQL engines
	take 1 tsv "t=$(wl_pid b)"
	refused "$FP/t.tsv" "not a ksm-run fingerprint" -- --combine "$a" "$FP/t.tsv"
	# and the good ones still combine
	combine "$a" "$b"
}

# max_rss_of CMD...: runs CMD (its status in $status, its stderr in
# $stderr), its peak memory in KiB in $rss_kib (GNU time's %M).
max_rss_of() {
	local out=$BATS_TEST_TMPDIR/rss
	status=0
	/usr/bin/time -o "$out" -f %M "$@" >/dev/null 2>"$BATS_TEST_TMPDIR/rss.err" || status=$?
	stderr=$(<"$BATS_TEST_TMPDIR/rss.err")
	rss_kib=$(tail -n 1 "$out")
}

@test "fleet: --combine refuses a FIFO at once and reads only the header of a 2 GiB file that is not a fingerprint" {
	start_workload a -- "$PROGS/dupmem" seed=0x300000000 distinct=2 pairs=1 wait
	take 1 binary "a=$(wl_pid a)"
	local a=$FP/a.kfp
	mkfifo "$FP/fifo.kfp"
	# a FIFO with no writer blocked the open forever; bounded by timeout here
	run --separate-stderr timeout -k 5 10 "$KSM_RUN" --combine "$a" "$FP/fifo.kfp"
	echo "status $status: $stderr"
	[ "$status" = 125 ]
	[[ $stderr == *"$FP/fifo.kfp: not a regular file"* ]]
	# 2 GiB of holes: refused by its first bytes, not read whole
	truncate -s 2G "$FP/sparse.kfp"
	max_rss_of timeout 60 "$KSM_RUN" --combine "$a" "$FP/sparse.kfp"
	echo "status $status, peak $rss_kib KiB: $stderr"
	[ "$status" = 125 ] && [[ $stderr == *"not a ksm-run fingerprint"* ]]
	[ "$rss_kib" -lt 65536 ]
	# a real header on 2 GiB: the length disagrees with the header's
	cp "$a" "$FP/grown.kfp"
	truncate -s 2G "$FP/grown.kfp"
	max_rss_of timeout 60 "$KSM_RUN" --combine "$a" "$FP/grown.kfp"
	echo "status $status, peak $rss_kib KiB: $stderr"
	[ "$status" = 125 ] && [[ $stderr == *"corrupt (bytes after the end): 2147483648 bytes"* ]]
	[ "$rss_kib" -lt 65536 ]
	# a link the user names is input like any other: followed
	ln -s "$a" "$FP/link.kfp"
	combine "$FP/link.kfp" "$a"
}

# hashes FILE: the content hashes of a TSV fingerprint, sorted.
hashes() { awk -F'\t' 'NR > 1 && $1 ~ /^[0-9a-f]+$/ { print $1 }' "$1" | sort; }

@test "fleet: fingerprints are private and keyed: 0600 under umask 022, stricter with a stricter umask; one content, two keys, two hashes; mixed keys do not combine" {
	start_workload a -- "$PROGS/dupmem" seed=0x300000000 distinct=2 pairs=1 wait
	local p key1=$FP/one.key key2=$FP/two.key k
	p=$(wl_pid a)
	( umask 022; "$KSM_RUN" --estimate="$p" --fingerprint="$FP/u022.kfp" ) >/dev/null 2>&1
	( umask 077; "$KSM_RUN" --estimate="$p" --fingerprint="$FP/u077.kfp" ) >/dev/null 2>&1
	( umask 0277; "$KSM_RUN" --estimate="$p" --fingerprint="$FP/u277.kfp" ) >/dev/null 2>&1
	[ "$(stat -c %a "$FP/u022.kfp")" = 600 ]
	[ "$(stat -c %a "$FP/u077.kfp")" = 600 ]
	[ "$(stat -c %a "$FP/u277.kfp")" = 400 ]
	# the key made beside them: 0600, root's, and in no fingerprint
	[ "$(stat -c %a:%u "$FP/ksm-run-fleet.key")" = 600:0 ]
	k=$(head -c 32 "$FP/ksm-run-fleet.key")
	[[ $k =~ ^[0-9a-f]{32}$ ]]
	! grep -q "$k" "$FP/u022.kfp"
	python3 -c 'import sys; k = bytes.fromhex(sys.argv[1]); b = open(sys.argv[2], "rb").read(); sys.exit(k in b or k[:8] in b or k[8:] in b)' "$k" "$FP/u022.kfp"
	# the same contents under two keys: no hash in common; under one key twice: the same
	run -0 --separate-stderr "$KSM_RUN" --estimate="$p" --fingerprint="$FP/k1.tsv" --fingerprint-format=tsv --fingerprint-key="$key1"
	[[ $stderr == *"fingerprint key: made $key1 (mode 0600)"* ]]
	run -0 "$KSM_RUN" --estimate="$p" --fingerprint="$FP/k2.tsv" --fingerprint-format=tsv --fingerprint-key="$key2"
	run -0 "$KSM_RUN" --estimate="$p" --fingerprint="$FP/k1again.tsv" --fingerprint-format=tsv --fingerprint-key="$key1"
	[ "$(hashes "$FP/k1.tsv" | wc -l)" -ge 2 ]
	[ "$(hashes "$FP/k1.tsv")" = "$(hashes "$FP/k1again.tsv")" ]
	[ -z "$(comm -12 <(hashes "$FP/k1.tsv") <(hashes "$FP/k2.tsv"))" ]
	# the TSV says its key's id, which is not the key
	grep -q "^key:[0-9a-f]\{16\}	0	0	" "$FP/k1.tsv"
	! grep -q "$(head -c 16 "$key1")" "$FP/k1.tsv"
	# binary fingerprints of two keys are refused together
	run -0 "$KSM_RUN" --estimate="$p" --fingerprint="$FP/k1.kfp" --fingerprint-key="$key1"
	run -0 "$KSM_RUN" --estimate="$p" --fingerprint="$FP/k2.kfp" --fingerprint-key="$key2"
	refused "$FP/k1.kfp and $FP/k2.kfp cannot be combined: they were made with different keys" \
		"--fingerprint-key" -- --combine "$FP/k1.kfp" "$FP/k2.kfp"
	combine "$FP/k1.kfp" "$FP/k1.kfp"
	# a key others may read, a key of another user, a FIFO: refused, nothing written
	chmod 0640 "$key1"
	refused "fingerprint key $key1: refused" "chmod 600" -- --estimate="$p" --fingerprint="$FP/x.kfp" --fingerprint-key="$key1"
	chmod 0600 "$key1"
	chown nobody "$key1"
	refused "fingerprint key $key1: refused: owned by uid 65534" -- --estimate="$p" --fingerprint="$FP/x.kfp" --fingerprint-key="$key1"
	mkfifo "$FP/fifo.key"
	run --separate-stderr timeout -k 5 10 "$KSM_RUN" --estimate="$p" --fingerprint="$FP/x.kfp" --fingerprint-key="$FP/fifo.key"
	[ "$status" = 125 ] && [[ $stderr == *"fingerprint key $FP/fifo.key: not a regular file"* ]]
	echo "not a key" >"$FP/bad.key"
	chmod 600 "$FP/bad.key"
	refused "fingerprint key $FP/bad.key: not a key" -- --estimate="$p" --fingerprint="$FP/x.kfp" --fingerprint-key="$FP/bad.key"
	[ ! -e "$FP/x.kfp" ]
	refused "--fingerprint-key is not an option of --combine" -- --combine --fingerprint-key="$key2" "$FP/k2.kfp"
}

@test "fleet: TSV fingerprints and the man page's SQL in sqlite3 give the figures of --combine and --matrix" {
	command -v sqlite3 >/dev/null || skip_or_fail "no sqlite3 (install sqlite3; tests/install-deps does)"
	start_workload a -- "$PROGS/dupmem" seed=0x300000000 distinct=4 unique=2 pairs=1 zeros=1 wait
	start_workload b -- "$PROGS/dupmem" seed=0x300000000 distinct=4 seed=0x500000000 distinct=2 zeros=1 wait
	start_workload c -- "$PROGS/dupmem" seed=0x500000000 distinct=2 mmap=1 wait
	local t="a=$(wl_pid a)" u="b=$(wl_pid b)" v="c=$(wl_pid c)" db=$BATS_TEST_TMPDIR/plan.db mps uzp f
	take 1 binary "$t" "$u" "$v"
	run --separate-stderr "$KSM_RUN" --combine --matrix --json "$FP"/{a,b,c}.kfp
	COMB=$output
	take 1 tsv "$t" "$u" "$v"
	head -n 1 "$FP/a.tsv" | grep -qx $'hash\tpages\tone_frame\tlabel'
	# The SQL as the man page prints it, with this host's settings.
	mps=$(cat $KSM/max_page_sharing)
	uzp=$(cat $KSM/use_zero_pages)
	for f in union pairs; do
		sed -n "/^\.\\\\\" sql-$f-begin/,/^\.\\\\\" sql-$f-end/p" "$TOP/man/ksm-run.1" | grep -v '^\.' |
			sed "s/SELECT 256 AS mps, 0 AS uzp/SELECT $mps AS mps, $uzp AS uzp/" >"$BATS_TEST_TMPDIR/$f.sql"
		grep -q "SELECT $mps AS mps, $uzp AS uzp" "$BATS_TEST_TMPDIR/$f.sql"
	done
	sqlite3 "$db" 'CREATE TABLE fp (hash TEXT, pages INTEGER, one_frame INTEGER, label TEXT)'
	for f in a b c; do sqlite3 -cmd '.mode tabs' "$db" ".import --skip 1 $FP/$f.tsv fp"; done
	run sqlite3 -separator ' ' "$db" <"$BATS_TEST_TMPDIR/union.sql"
	echo "SQL: $output; --combine: $(comb .union.pages_sharing) $(comb .alone.pages_sharing) $(comb .gain.pages_sharing)"
	[ "$status" = 0 ]
	[ "$output" = "$(comb .union.pages_sharing) $(comb .alone.pages_sharing) $(comb .gain.pages_sharing)" ]
	[ "$(comb .gain.pages_sharing)" -gt 1024 ]
	run sqlite3 -separator ' ' "$db" <"$BATS_TEST_TMPDIR/pairs.sql"
	echo "SQL pairs: $output"
	[ "$status" = 0 ]
	# --matrix's pairs with a gain, by label, in the same order
	[ "$output" = "$(jq -r '.matrix.labels as $l | .pairs[] | select(.gain_pages != 0) |
		"\($l[.a]) \($l[.b]) \(.gain_pages)"' <<<"$COMB")" ]
}

@test "fleet: a full fingerprint takes at most 8 bytes per distinct content, as ksm-run reports" {
	start_workload a -- "$PROGS/dupmem" unique=128 pairs=16 wait
	take 1 binary "a=$(wl_pid a)"
	combine "$FP/a.kfp"
	local size distinct
	size=$(stat -c %s "$FP/a.kfp")
	distinct=$(comb '.fingerprints[0].distinct')
	echo "$size bytes for $distinct distinct contents; $TAKE_ERR"
	[ "$distinct" -ge $((32768 + 2048)) ]
	[ $((size)) -le $((8 * distinct)) ]
	[[ $TAKE_ERR == *"$distinct distinct contents, $distinct kept (sampling 1/1), $size bytes"* ]]
}

@test "fleet: --fingerprint-per-cgroup writes one fingerprint per cgroup, labelled with its path" {
	local h cg=ksmenable-test-$$ k
	h=$(cgroup_root)
	make_cgroup a
	make_cgroup b
	start_workload a -- "$PROGS/dupmem" seed=0x300000000 distinct=2 wait
	start_workload b -- "$PROGS/dupmem" seed=0x300000000 distinct=2 wait
	echo "$(wl_pid a)" >"$h/$cg-a/cgroup.procs"
	echo "$(wl_pid b)" >"$h/$cg-b/cgroup.procs"
	run --separate-stderr "$KSM_RUN" --estimate="cgroup:$h/$cg-a,cgroup:$h/$cg-b" --fingerprint-per-cgroup="$FP"
	echo "$stderr"
	k=$status
	stop_workloads
	[ "$k" = 0 ]
	[ "$(ls "$FP" | grep -v "^ksm-run-fleet.key$")" = "$(printf '%s\n' "$cg-a.kfp" "$cg-b.kfp")" ]
	[ -f "$FP/ksm-run-fleet.key" ]     # the key made beside them
	combine "$FP/$cg-a.kfp" "$FP/$cg-b.kfp"
	[ "$(comb '[.fingerprints[].label] | join(" ")')" = "/$cg-a /$cg-b" ]
	[ "$(comb .gain.pages_sharing)" -ge 512 ]
}

@test "fleet: --fingerprint-per-cgroup keeps two groups apart whose paths make the same file name" {
	local h cg=ksmenable-test-$$ k
	h=$(cgroup_root)
	# /CG-x/y and /CG-x_y both become CG-x_y.kfp
	make_cgroup x/y
	make_cgroup x_y
	start_workload a -- "$PROGS/dupmem" seed=0x300000000 distinct=2 wait
	start_workload b -- "$PROGS/dupmem" seed=0x500000000 distinct=2 wait
	echo "$(wl_pid a)" >"$h/$cg-x/y/cgroup.procs"
	echo "$(wl_pid b)" >"$h/$cg-x_y/cgroup.procs"
	run --separate-stderr "$KSM_RUN" --estimate="cgroup:$h/$cg-x/y,cgroup:$h/$cg-x_y" --fingerprint-per-cgroup="$FP"
	echo "$stderr"
	k=$status
	stop_workloads
	[ "$k" = 0 ]
	[ "$(ls "$FP" | grep -v "^ksm-run-fleet.key$" | LC_ALL=C sort)" = "$(printf '%s\n' "$cg-x_y-2.kfp" "$cg-x_y.kfp")" ]
	combine "$FP/$cg-x_y.kfp" "$FP/$cg-x_y-2.kfp"
	[ "$(comb '[.fingerprints[].label] | sort | join(" ")')" = "/$cg-x/y /$cg-x_y" ]
}

@test "fleet: zero pages that a huge page's split frees are left out of a fingerprint, as out of the estimate" {
	start_workload a -- "$PROGS/dupmem" merge=auto hugezeros=8 mmap=2 wait
	thp_given "$(wl_pid a)" 8192
	# The estimate of the pass that took the fingerprint: a separate pass
	# may find a huge page split meanwhile (under memory pressure, the
	# kernel splits one that is mostly zeros), and its zero pages freed.
	take 1 binary "A=$(wl_pid a)"
	EST=$output
	combine "$FP/A.kfp"
	echo "estimate: $(est pages_sharing) $(est rmap_items), freed by split $(est freed_by_split_pages);" \
		"union: $(comb .union.pages_sharing) $(comb .union.rmap_items)"
	[ "$(est huge_zero_pages)" -ge 2048 ]
	[ "$(comb .union.pages_sharing)" = "$(est pages_sharing)" ]
	[ "$(comb .union.zero_pages)" = "$(est zero_pages)" ]
	[ "$(comb .union.rmap_items)" = "$(est rmap_items)" ]
	[ "$(comb .union.general_profit)" = "$(est profit_bytes)" ]
}
