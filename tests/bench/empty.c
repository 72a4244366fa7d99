/*
 * empty.so - a preload library that does nothing.  The benchmark preloads
 * it to show what any LD_PRELOAD costs a program's start (the dynamic
 * loader's work), apart from what libksmenable itself does.
 */
int ksmbench_empty_library;
