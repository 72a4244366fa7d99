/*
 * selector.h - the allow/deny list grammar.
 *
 *   LIST     := SELECTOR [ "," SELECTOR ]...
 *   SELECTOR := "all" | "heap" | "stack" | "anon" | "secret" | "anon:" GLOB | "file:" GLOB
 *
 * Spaces around a selector are ignored; an empty selector is an error.
 * GLOB is an fnmatch(3) pattern without flags ('*' also matches '/'), see
 * glob.h.  "secret" is memory that looks like key material (see
 * region_is_secret): "all" never includes it, and it is denied unless an
 * allow list names it.
 */
#ifndef KSMENABLE_SELECTOR_H
#define KSMENABLE_SELECTOR_H

#include <stddef.h>

#include "maps.h"

#define SELECTOR_MAX 32
#define SELECTOR_TEXT_MAX 4096

enum selector_kind { SEL_ALL, SEL_HEAP, SEL_STACK, SEL_ANON, SEL_SECRET, SEL_ANON_NAME, SEL_FILE };

struct selector {
	enum selector_kind kind;
	const char *glob;          /* SEL_ANON_NAME, SEL_FILE: into text[] */
};

struct selector_list {
	unsigned count;
	struct selector items[SELECTOR_MAX];
	char text[SELECTOR_TEXT_MAX];
};

/* The list "all", the default allow list. */
extern const struct selector_list selector_all;

#define SELECTOR_ACCEPTED "all, heap, stack, anon, secret, anon:GLOB, file:GLOB"

/*
 * Parse TEXT into LIST.  On error returns -1 and writes a message (what is
 * wrong and what is accepted, without the variable's name) to ERR.
 */
int selector_parse(struct selector_list *list, const char *text, char *err, size_t errlen);

/* Does any selector of LIST choose region R? */
int selector_matches(const struct selector_list *list, const struct region *r);

/* Does any selector of LIST name R specifically (anon:GLOB, file:GLOB)? */
int selector_names(const struct selector_list *list, const struct region *r);

/* Does LIST have a file:GLOB, which needs a region's path? */
int selector_uses_paths(const struct selector_list *list);

/* Does LIST have a selector of KIND?  (LIST may be NULL.) */
int selector_has(const struct selector_list *list, enum selector_kind kind);

/*
 * Does R look like key material?  Memory wiped on fork (wf: random
 * generator state in OpenSSL and BoringSSL), or both locked and kept out of
 * core dumps (lo and dd: OpenSSL's secure heap, libsodium's guarded
 * allocations).  Not DONTDUMP alone: QEMU's guest RAM and large caches are
 * kept out of dumps too, and are what KSM is for.  Needs R's VmFlags.
 */
int region_is_secret(const struct region *r);

#endif
