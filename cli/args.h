/* args.h — what every mhaviz command needs to read its argv. */
#ifndef MHAVIZ_ARGS_H
#define MHAVIZ_ARGS_H

#include <stddef.h>

/* Print "COMMAND: " + the message (fmt with one %s for arg) and a hint to
 * stderr, then exit with the usage status (2). */
_Noreturn void args_usage_error(const char *command, const char *fmt, const char *arg);

/* s as a whole number in [lo, hi], or a usage error naming the option. */
int args_parse_int(const char *command, const char *s, int lo, int hi, const char *option);

/* item, the n bytes of one entry of a comma-separated list ("5.1", "3-6"),
 * into buf (buflen bytes) as a string. Returns 0, or -1 when it is empty,
 * does not fit, holds anything but digits and sep, or starts with sep. */
int args_list_item(const char *item, size_t n, char sep, char *buf, size_t buflen);

#endif
