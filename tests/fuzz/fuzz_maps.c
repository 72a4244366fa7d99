/*
 * fuzz_maps.c - the maps/smaps parser (preload/core/maps.c), differential:
 * maps_parse_text on the text, and maps_for_each_fd on the same text in a
 * memory file through a small, odd buffer (a read then ends anywhere in a
 * line) and through the library's own 16384 bytes.  Both must hand over
 * the same regions (start, end, class, name, deleted, VmFlags, mergeable,
 * KSM:, Anonymous:), except where maps.c says that the stream differs.
 * The reference is maps_parse_text itself, on the text as the stream sees
 * it, by these rules read from maps.c:
 *
 *  - a line of BUFSIZE - 1 bytes or more (its newline not counted) never
 *    fits: it is dropped, and the region before it ends there (it is
 *    handed over before the line, so the field lines after the long line
 *    belong to no region until the next header);
 *  - a region whose name and the unparsed part of a line no longer fit in
 *    half the buffer is handed over early, with the fields of the lines
 *    before that line only: allowed when name_len + 1 + the length of that
 *    line >= BUFSIZE / 2 (the unparsed part is at most the line);
 *  - a line is what comes before its first NUL byte (the parsers read C
 *    strings; maps_parse_text itself stops at the first NUL of its text,
 *    so the reference parses the text with each line cut at its NUL).
 *
 * The reads themselves are split too, as reads of /proc are: short reads,
 * EINTR, and an EIO that ends the walk with -1 after a prefix of the
 * regions (fuzz_read.h).
 *
 * Input: two bytes for the buffer size (2 to 1025; a long text gets at
 * least a 64th of its size, so that it takes at most about 64 reads), one
 * for the region after which the callback stops the walk (0: never), one
 * for the reads (fuzz_read_start), then the text.
 */
#include "fuzz.h"
#include "fuzz_read.h"
#include "maps.h"

struct got {
	unsigned long start, end;
	int cls, deleted, mergeable, vmflags;
	long ksm_kb, anon_kb;
	size_t name_off, name_len;
};

struct seen {
	struct got *r;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	size_t stop_after;              /* return 7 after this many regions; 0: never */
};

static int collect(const struct region *r, void *arg)
{
	struct seen *s = arg;
	struct got *g;

	FUZZ_CHECK(r->name || !r->name_len, "a name of %zu bytes at NULL", r->name_len);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		if (!(s->r = realloc(s->r, s->cap * sizeof *s->r)))
			abort();
	}
	if (s->names_len + r->name_len > s->names_cap) {
		s->names_cap = 2 * (s->names_len + r->name_len) + 64;
		if (!(s->names = realloc(s->names, s->names_cap)))
			abort();
	}
	g = &s->r[s->n++];
	*g = (struct got){ r->start, r->end, r->cls, r->deleted, r->mergeable, r->vmflags,
			   r->ksm_kb, r->anon_kb, s->names_len, r->name_len };
	if (r->name_len)
		memcpy(s->names + s->names_len, r->name, r->name_len);
	s->names_len += r->name_len;
	return s->stop_after && s->n == s->stop_after ? 7 : 0;
}

static void seen_free(struct seen *s)
{
	free(s->r);
	free(s->names);
	memset(s, 0, sizeof *s);
}

/* The regions maps_parse_text finds in the N bytes at TEXT (a copy: it writes). */
static int parse_copy(const char *text, size_t n, struct seen *s)
{
	char *copy = fuzz_str((const uint8_t *)text, n);
	int ret = maps_parse_text(copy, collect, s);

	free(copy);
	return ret;
}

struct line {
	const char *p;
	size_t len, full;               /* up to its first NUL; all its bytes */
	int is_long;
};

/* One region of the model: its header line and the field lines after it. */
struct block {
	size_t header, first, count;    /* indexes into the lines */
};

/* The line (of N, starting at STARTS) that holds offset OFF. */
static size_t line_of(const size_t *starts, size_t n, size_t off)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (starts[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Header line H and the first J field lines after it, as one text. */
static void block_text(const struct line *lines, const struct block *b, size_t j, char **buf, size_t *cap, size_t *n)
{
	size_t need = lines[b->header].len + 1;

	for (size_t i = 0; i < j; i++)
		need += lines[b->first + i].len + 1;
	if (need > *cap) {
		*cap = need;
		if (!(*buf = realloc(*buf, *cap)))
			abort();
	}
	*n = 0;
	memcpy(*buf, lines[b->header].p, lines[b->header].len);
	*n += lines[b->header].len;
	(*buf)[(*n)++] = '\n';
	for (size_t i = 0; i < j; i++) {
		memcpy(*buf + *n, lines[b->first + i].p, lines[b->first + i].len);
		*n += lines[b->first + i].len;
		(*buf)[(*n)++] = '\n';
	}
}

static int same_fields(const struct got *a, const struct got *b)
{
	return a->mergeable == b->mergeable && a->vmflags == b->vmflags && a->ksm_kb == b->ksm_kb &&
	       a->anon_kb == b->anon_kb;
}

/* Does region A of S equal region B of T, but for the smaps fields? */
static int same_region(const struct seen *s, const struct got *a, const struct seen *t, const struct got *b)
{
	return a->start == b->start && a->end == b->end && a->cls == b->cls && a->deleted == b->deleted &&
	       a->name_len == b->name_len &&
	       (!a->name_len || !memcmp(s->names + a->name_off, t->names + b->name_off, a->name_len));
}

/* Where in the clean copy each region's header is: the callback's name points into it. */
struct locate {
	struct seen *seen;
	const char *base;
	size_t *header_off;
};

static int locate_collect(const struct region *r, void *arg)
{
	struct locate *l = arg;

	l->header_off[l->seen->n] = (size_t)(r->name - l->base);
	return collect(r, l->seen);
}

/*
 * The model: the text with each line cut at its NUL, parsed by
 * maps_parse_text piece by piece between the long lines (a long line ends
 * the region before it).  Fills MODEL and the block of lines of each region.
 */
static void model_of(size_t len, const struct line *lines, size_t nlines, struct block *blocks, struct seen *model)
{
	char *clean = fuzz_alloc(len + 1);
	size_t *starts = fuzz_alloc((nlines + 1) * sizeof *starts);
	size_t *header_off = fuzz_alloc((nlines + 1) * sizeof *header_off);
	struct locate loc = { model, clean, header_off };
	size_t n = 0, i, b, next;

	for (i = 0; i < nlines;) {
		size_t from = n;

		for (; i < nlines && !lines[i].is_long; i++) {
			starts[i] = n;
			memcpy(clean + n, lines[i].p, lines[i].len);
			n += lines[i].len;
			clean[n++] = '\n';
		}
		if (n > from) {
			clean[n - 1] = '\0';
			maps_parse_text(clean + from, locate_collect, &loc);
		}
		if (i < nlines)
			starts[i++] = n;        /* a long line: nothing of it */
	}
	next = model->n ? line_of(starts, nlines, header_off[0]) : 0;
	for (b = 0; b < model->n; b++) {
		size_t h = next, end = h + 1;

		next = b + 1 < model->n ? line_of(starts, nlines, header_off[b + 1]) : nlines;
		while (end < next && !lines[end].is_long)
			end++;
		blocks[b] = (struct block){ h, h + 1, end - h - 1 };
	}
	free(header_off);
	free(starts);
	free(clean);
}

static void check_stream(const char *text, size_t len, size_t bufsize, size_t stop_after, unsigned reads)
{
	size_t nlines = 0, cap = 0, n, i;
	struct line *lines;
	struct block *blocks;
	struct seen model = { 0 }, got = { 0 };
	char *buf = NULL, *mem;
	int ret, fd;

	for (const char *p = text, *end = text + len; p < end; nlines++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	lines = fuzz_alloc((nlines + 1) * sizeof *lines);
	blocks = fuzz_alloc((nlines + 1) * sizeof *blocks);
	nlines = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t full = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *nul = memchr(p, '\0', full);

		lines[nlines++] = (struct line){ p, nul ? (size_t)(nul - p) : full, full, full >= bufsize - 1 };
		p += full + (nl != NULL);
	}
	model_of(len, lines, nlines, blocks, &model);

	/* The stream, through a buffer of exactly BUFSIZE bytes. */
	mem = fuzz_alloc(bufsize);
	got.stop_after = stop_after;
	fd = fuzz_memfd(text, len);
	fuzz_read_start(reads, len);
	ret = maps_for_each_fd(fd, mem, bufsize, collect, &got);
	fuzz_read_stop();
	free(mem);
	if (ret == -1 && fuzz_read_plan.eio_done)
		FUZZ_CHECK(errno == EIO && got.n <= model.n && (!stop_after || got.n < stop_after),
			   "buffer %zu: a failed read: errno %d after %zu regions of %zu", bufsize, errno, got.n, model.n);
	else if (stop_after && stop_after <= model.n)
		FUZZ_CHECK(ret == 7 && got.n == stop_after, "buffer %zu: stopped with %d after %zu regions, not 7 after %zu",
			   bufsize, ret, got.n, stop_after);
	else
		FUZZ_CHECK(ret == 0 && got.n == model.n, "buffer %zu: %d, %zu regions, not 0 and %zu",
			   bufsize, ret, got.n, model.n);
	for (i = 0; i < got.n; i++) {
		const struct got *g = &got.r[i], *w = &model.r[i];
		const struct block *b = &blocks[i];
		size_t j;

		FUZZ_CHECK(same_region(&got, g, &model, w), "buffer %zu: region %zu (header line %zu) differs: "
			   "%lx-%lx class %d name %.*s, not %lx-%lx class %d name %.*s", bufsize, i, b->header,
			   g->start, g->end, g->cls, (int)g->name_len, got.names + g->name_off,
			   w->start, w->end, w->cls, (int)w->name_len, model.names + w->name_off);
		if (same_fields(g, w))
			continue;
		/* Handed over early, before field line J: its fields so far only. */
		for (j = 0; j < b->count; j++) {
			struct seen early = { 0 };
			int match;

			if (w->name_len + 1 + lines[b->first + j].full < bufsize / 2)
				continue;
			block_text(lines, b, j, &buf, &cap, &n);
			parse_copy(buf, n, &early);
			match = early.n == 1 && same_fields(g, &early.r[0]);
			seen_free(&early);
			if (match)
				break;
		}
		FUZZ_CHECK(j < b->count, "buffer %zu: region %zu (header line %zu): mergeable %d vmflags %d ksm %ld "
			   "anon %ld, not %d %d %ld %ld nor what the lines before any break point give",
			   bufsize, i, b->header, g->mergeable, g->vmflags, g->ksm_kb, g->anon_kb,
			   w->mergeable, w->vmflags, w->ksm_kb, w->anon_kb);
	}
	seen_free(&got);
	seen_free(&model);
	free(buf);
	free(blocks);
	free(lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t bufsize, stop_after;
	unsigned reads;
	struct seen whole = { 0 };
	char *text;

	if (!data)
		data = (const uint8_t *)"";     /* libFuzzer hands over NULL for nothing */
	bufsize = 2 + fuzz_byte(&data, &size);
	bufsize += 256 * (fuzz_byte(&data, &size) & 3);
	stop_after = fuzz_byte(&data, &size);
	reads = fuzz_byte(&data, &size);
	/* At most about 64 reads per input (each a system call): tiny buffers
	 * only for short texts. */
	if (size / (bufsize - 1) > 64)
		bufsize = size / 64 + 2;
	/* The whole text as given (up to its first NUL, as a C string). */
	text = fuzz_str(data, size);
	maps_parse_text(text, collect, &whole);
	seen_free(&whole);
	free(text);
	check_stream((const char *)data, size, bufsize, stop_after, reads);
	check_stream((const char *)data, size, 16384, 0, reads);
	return 0;
}
