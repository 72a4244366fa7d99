/* human.h - sizes for people: "12.3 MiB". */
#ifndef KSMRUN_HUMAN_H
#define KSMRUN_HUMAN_H

#include <stdbool.h>

/*
 * BYTES in B, KiB, MiB or GiB, with a sign when SIGN (for deltas); "n/a"
 * for LLONG_MIN (unknown).  Eight rotating buffers serve one printf.
 */
const char *human_bytes(long long bytes, bool sign);

#endif
