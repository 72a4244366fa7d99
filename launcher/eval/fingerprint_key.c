/*
 * fingerprint_key.c - reading or making the fleet's fingerprint key.
 *
 * The key is a secret: whoever holds it can confirm a guess of a page's
 * content from a fingerprint.  So a key file that another user could have
 * written (and so knows) or can read is refused, a new one is made with
 * O_EXCL and mode 0600 (no planted file or link is used), and the header
 * of a fingerprint carries only the key's id: SipHash-2-4 under the key of
 * a fixed string, which says whether two fingerprints share a key and
 * nothing of the key.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "eval/fingerprint_key.h"

static const char key_id_domain[] = "ksm-run fingerprint key id";

void fp_key_of(const unsigned char raw[SIPHASH_KEY_BYTES], struct fp_key *key)
{
	key->k = siphash_key_of(raw);
	key->id = siphash24(&key->k, key_id_domain, sizeof key_id_domain - 1);
}

void fp_key_beside(const char *file, char *out, size_t len)
{
	const char *slash = strrchr(file, '/');

	if (!slash)
		snprintf(out, len, "%s", FP_KEY_NAME);
	else
		snprintf(out, len, "%.*s/%s", (int)(slash - file), file, FP_KEY_NAME);
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A new key at PATH: -EEXIST when there is one already. */
static int make_key(const char *path, struct fp_key *key)
{
	unsigned char raw[SIPHASH_KEY_BYTES];
	char text[2 * SIPHASH_KEY_BYTES + 2];
	int fd, err = 0;

	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return -errno;
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(text + 2 * i, 3, "%02x", raw[i]);
	text[2 * sizeof raw] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, sizeof text - 1) != (ssize_t)sizeof text - 1 || fsync(fd))
		err = errno ? errno : EIO;
	if (close(fd) && !err)
		err = errno;
	if (err) {
		unlink(path);
		return -err;
	}
	fp_key_of(raw, key);
	msg("fingerprint key: made %s (mode 0600): copy it to every host of the fleet and give it with "
	    "--fingerprint-key there, as fingerprints combine only with those of the same key", path);
	return 0;
}

static int read_key(const char *path, struct fp_key *key)
{
	unsigned char raw[SIPHASH_KEY_BYTES];
	char text[2 * SIPHASH_KEY_BYTES + 8];
	struct stat st;
	ssize_t n;
	int fd = file_open_input(path, &st);

	if (fd < 0) {
		msg("fingerprint key %s: %s", path, file_strerror(-fd));
		return -1;
	}
	if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 077)) {
		msg("fingerprint key %s: refused: owned by uid %d with mode %04o; it must belong to uid %d "
		    "(or root) and be readable by no one else (chmod 600)", path, (int)st.st_uid,
		    (unsigned)(st.st_mode & 07777), (int)geteuid());
		close(fd);
		return -1;
	}
	n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n >= 0)
		text[n] = '\0';
	if (n == 2 * SIPHASH_KEY_BYTES + 1 && text[n - 1] == '\n')
		text[--n] = '\0';
	for (ssize_t i = 0; n == 2 * SIPHASH_KEY_BYTES && i < n; i += 2) {
		int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
		if (hi < 0 || lo < 0)
			n = -1;
		else
			raw[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	if (n != 2 * SIPHASH_KEY_BYTES) {
		msg("fingerprint key %s: not a key (accepted: %d hexadecimal digits and a newline, as "
		    "`od -An -tx1 -N16 /dev/urandom | tr -d ' \\n'` prints)", path, 2 * SIPHASH_KEY_BYTES);
		return -1;
	}
	fp_key_of(raw, key);
	return 0;
}

int fp_key_load(const char *path, struct fp_key *key)
{
	int r = make_key(path, key);

	if (r == -EEXIST)
		return read_key(path, key);
	if (r < 0) {
		msg("fingerprint key %s: cannot be made: %s", path, file_strerror(-r));
		return -1;
	}
	return 0;
}
