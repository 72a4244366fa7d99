/*
 * jsonw.c - the JSON writer of jsonw.h.  Nesting deeper than JSONW_DEPTH
 * is a bug of the caller: the writer then leaves those levels out (their
 * members still written, so the output fails to parse in the tests that
 * parse every JSON output) rather than go beyond its state.
 */
#include <limits.h>
#include <math.h>

#include "common/json.h"
#include "common/jsonw.h"
#include "common/parse.h"

void jw_start(struct jsonw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->object[0] = false;
	w->members[0] = false;
	w->lost = 0;
}

/* What comes before a value: a comma after an earlier member, and the key in an object. */
static void member(struct jsonw *w, const char *key)
{
	int d = w->depth;

	if (w->members[d])
		fputc(',', w->f);
	w->members[d] = true;
	if (d > 0 && w->object[d]) {
		json_str(w->f, key ? key : "");
		fputc(':', w->f);
	}
}

static void open_level(struct jsonw *w, const char *key, bool object)
{
	if (w->depth + 1 >= JSONW_DEPTH) {
		w->lost++;
		return;
	}
	member(w, key);
	fputc(object ? '{' : '[', w->f);
	w->depth++;
	w->object[w->depth] = object;
	w->members[w->depth] = false;
}

void jw_object(struct jsonw *w, const char *key)
{
	open_level(w, key, true);
}

void jw_array(struct jsonw *w, const char *key)
{
	open_level(w, key, false);
}

void jw_end(struct jsonw *w)
{
	if (w->lost > 0) {
		w->lost--;
		return;
	}
	if (w->depth == 0)
		return;
	fputc(w->object[w->depth] ? '}' : ']', w->f);
	w->depth--;
}

void jw_finish(struct jsonw *w)
{
	while (w->depth > 0)
		jw_end(w);
	fputc('\n', w->f);
	w->members[0] = false;
}

void jw_string(struct jsonw *w, const char *key, const char *s)
{
	member(w, key);
	json_str(w->f, s);
}

void jw_ll(struct jsonw *w, const char *key, long long v)
{
	member(w, key);
	json_ll(w->f, v);
}

void jw_fixed(struct jsonw *w, const char *key, double v, int decimals, bool neg_is_unknown)
{
	member(w, key);
	if (!isfinite(v) || (neg_is_unknown && v < 0))
		fputs("null", w->f);
	else
		fprintf(w->f, "%.*f", decimals, v);
}

void jw_g(struct jsonw *w, const char *key, double v)
{
	member(w, key);
	if (isfinite(v))
		fprintf(w->f, "%g", v);
	else
		fputs("null", w->f);
}

void jw_bool(struct jsonw *w, const char *key, bool v)
{
	member(w, key);
	json_bool(w->f, v);
}

void jw_tristate(struct jsonw *w, const char *key, int v)
{
	member(w, key);
	json_tristate(w->f, v);
}

void jw_null(struct jsonw *w, const char *key)
{
	member(w, key);
	fputs("null", w->f);
}

void jw_knob(struct jsonw *w, const char *key, const char *value)
{
	long long v;

	member(w, key);
	if (value && !parse_ll(value, LLONG_MIN + 1, LLONG_MAX, &v))
		fprintf(w->f, "%lld", v);
	else
		json_str(w->f, value);
}
