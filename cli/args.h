/* args.h — what every mhaviz command needs to read its argv. */
#ifndef MHAVIZ_ARGS_H
#define MHAVIZ_ARGS_H

/* Print "COMMAND: " + the message (fmt with one %s for arg) and a hint to
 * stderr, then exit with the usage status (2). */
_Noreturn void args_usage_error(const char *command, const char *fmt, const char *arg);

/* s as a whole number in [lo, hi], or a usage error naming the option. */
int args_parse_int(const char *command, const char *s, int lo, int hi, const char *option);

#endif
