/*
 * estimate_cost.c - the cost beside the savings: the per-page cost the
 * host measured (or the default, said "uncalibrated"), the model of
 * scancost.c under the default tuning and at --scan-rate, and --settle's
 * rewrites.
 */
#include <stdio.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/msg.h"
#include "eval/estimate_cost.h"
#include "eval/scancost.h"
#include "host/scancal.h"

void estimate_cost(struct est_result *r, struct scan_rate asked)
{
	struct est_cost *c = &r->cost;
	struct scancal cal;
	char why[400];

	memset(c, 0, sizeof *c);
	c->host = (struct scan_host){ SCANCOST_DEFAULT_NS, SCANCOST_DEFAULT_EXTRA_MS };
	switch (scancal_load(&cal, why, sizeof why)) {
	case 1:
		c->host = (struct scan_host){ cal.ns_per_page, cal.batch_extra_ms };
		c->calibrated = true;
		snprintf(c->kernel, sizeof c->kernel, "%s", cal.kernel);
		break;
	case -1:
		msg("--estimate: the scan cost kept on this host is not used: %s; the cost below is "
		    "uncalibrated (%.0f ns a page)", why, SCANCOST_DEFAULT_NS);
		break;
	}
	c->known = scan_cost_default(r->candidate, c->host, &c->tuned);
	if (asked.pages > 0) {
		c->rate = asked;
		c->have_rate = scan_cost_at_rate(r->candidate, c->host, c->rate, &c->at_rate);
	}
	c->cow_per_minute = cow_faults_per_minute(r->volatile_pages, r->settle);
}

static void json_cost(struct jsonw *w, const char *key, const struct scan_cost *k, struct scan_rate rate, bool steady)
{
	jw_object(w, key);
	jw_ll(w, "pages_to_scan", rate.pages);
	jw_ll(w, "sleep_millisecs", rate.sleep_ms);
	jw_fixed(w, "seconds", k->seconds, 2, false);
	jw_fixed(w, "seconds_to_95_percent", k->seconds_95, 2, false);
	jw_fixed(w, "ksmd_cpu_seconds", k->cpu_seconds, 2, false);
	jw_fixed(w, "ksmd_cpu_seconds_to_95_percent", k->cpu_seconds_95, 2, false);
	jw_g(w, "full_scans", k->passes);
	jw_bool(w, "cpu_bound", k->cpu_bound);
	if (steady) {
		jw_ll(w, "steady_pages_to_scan", k->steady_pages);
		jw_ll(w, "steady_sleep_millisecs", k->steady_sleep_ms);
		jw_fixed(w, "steady_ksmd_cpu_seconds_per_hour", k->steady_cpu_per_hour, 1, false);
	}
	jw_end(w);
}

void estimate_cost_json(struct jsonw *w, const struct est_result *r)
{
	const struct est_cost *c = &r->cost;

	jw_object(w, "cost");
	jw_fixed(w, "ns_per_page", c->host.ns_per_page, 1, false);
	jw_fixed(w, "batch_extra_ms", c->host.batch_extra_ms, 2, false);
	jw_bool(w, "calibrated", c->calibrated);
	if (c->calibrated)
		jw_string(w, "calibrated_kernel", c->kernel);
	else
		jw_null(w, "calibrated_kernel");
	if (c->known)
		json_cost(w, "default_tuning", &c->tuned, (struct scan_rate){ BOOST_RATE_PAGES, BOOST_RATE_MS }, true);
	else
		jw_null(w, "default_tuning");
	if (c->have_rate)
		json_cost(w, "scan_rate", &c->at_rate, c->rate, false);
	else
		jw_null(w, "scan_rate");
	if (r->settle > 0)
		jw_fixed(w, "cow_faults_per_minute", c->cow_per_minute, 1, false);
	else
		jw_null(w, "cow_faults_per_minute");
	jw_end(w);
}

static void text_cost(FILE *f, const char *what, const struct scan_cost *k)
{
	fprintf(f, "  %-34s savings in %.2f s (95%% in %.2f s), ksmd %.2f CPU-s (%.2f to 95%%)%s\n", what,
		k->seconds, k->seconds_95, k->cpu_seconds, k->cpu_seconds_95,
		k->cpu_bound ? ", CPU-bound: ksmd at one full core" : "");
}

void estimate_cost_text(FILE *f, const struct est_result *r)
{
	const struct est_cost *c = &r->cost;
	char what[64];

	if (!c->known)
		return;
	fprintf(f, "\nWhat reaching it would cost (ksmd at %.0f ns a page scanned, %.1f ms a batch beyond the sleep, %s):\n",
		c->host.ns_per_page, c->host.batch_extra_ms,
		c->calibrated ? "calibrated on this host" : "uncalibrated: the default until a ksm-run has tuned here");
	snprintf(what, sizeof what, "default tuning (%d/%d ms boost):", BOOST_RATE_PAGES, BOOST_RATE_MS);
	text_cost(f, what, &c->tuned);
	fprintf(f, "  %-34s then %ld pages every %ld ms: up to %.0f CPU-s an hour\n", "", c->tuned.steady_pages,
		c->tuned.steady_sleep_ms, c->tuned.steady_cpu_per_hour);
	if (c->have_rate) {
		snprintf(what, sizeof what, "at %ld pages every %ld ms:", c->rate.pages, c->rate.sleep_ms);
		text_cost(f, what, &c->at_rate);
	}
	if (r->settle > 0)
		fprintf(f, "  rewrites: up to %.0f merged pages a minute would be copied on write again "
			"(%llu pages changed within %g s)\n", c->cow_per_minute,
			(unsigned long long)r->volatile_pages, r->settle);
}
