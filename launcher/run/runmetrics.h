/*
 * runmetrics.h - a command's run writes the metrics file (runmetrics.c):
 * the machine's figures (host/metrics.h) and its command's tree, at each
 * sample; the file goes when the command has ended.
 */
#ifndef KSMRUN_RUNMETRICS_H
#define KSMRUN_RUNMETRICS_H

#include "host/hosttune.h"
#include "host/metrics.h"
#include "run/tree.h"

/* The command's tree now (walked afresh) and its peaks (from the sampler S). */
void run_metrics_command(const struct sampler *s, struct metrics_command *out);

/* Writes PATH; a failure is said once, and the run goes on. */
void run_metrics_write(const char *path, const struct host_tuner *h, const struct sampler *s);

#endif
