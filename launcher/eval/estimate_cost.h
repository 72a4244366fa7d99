/*
 * estimate_cost.h - --estimate's cost figures (estimate_cost.c): the model
 * of scancost.h fed the prediction and the host's calibration (scancal.h).
 */
#ifndef KSMRUN_ESTIMATE_COST_H
#define KSMRUN_ESTIMATE_COST_H

#include <stdio.h>

#include "eval/estimate_result.h"

/* Fills R->cost from R's candidate and volatile pages, and at the rate
 * ASKED (--scan-rate; pages 0: none); says on stderr why a calibration
 * kept on the host was refused. */
void estimate_cost(struct est_result *r, struct scan_rate asked);

/* R->cost beside the savings: an object "cost" in JSON, lines in the text. */
struct jsonw;
void estimate_cost_json(struct jsonw *w, const struct est_result *r);
void estimate_cost_text(FILE *f, const struct est_result *r);

#endif
