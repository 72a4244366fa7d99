/*
 * regionclass.h - the classes that --estimate and --profile break memory
 * into: heap, stack, anon, anon:NAME, or a file's path; and the selector
 * that chooses a class, for a recommended allow list.
 */
#ifndef KSMRUN_REGIONCLASS_H
#define KSMRUN_REGIONCLASS_H

#include <stddef.h>

#include "maps.h"

void region_class_name(const struct region *r, char *buf, size_t len);

/* The library selector for class NAME ("heap", "file:/usr/lib/x.so", ...),
 * with glob characters escaped.  Returns 0, or -1 if it does not fit. */
int class_selector(const char *name, char *buf, size_t len);

#endif
