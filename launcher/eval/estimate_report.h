/* estimate_report.h - printing the --estimate prediction (estimate_report.c). */
#ifndef KSMRUN_ESTIMATE_REPORT_H
#define KSMRUN_ESTIMATE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "eval/estimate_result.h"

/* A table for people (largest savings first), or one JSON object. */
void estimate_print(FILE *f, const struct est_result *r, bool json);

/* The same to PATH, whole or not at all (common/files.c): 0, or 125 with a message. */
int estimate_print_file(const char *path, const struct est_result *r, bool json);

#endif
