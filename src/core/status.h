/* status.h — the status codes every src/ function returns.
 *
 * The numbers are the CLI's exit codes, so cli/ can pass a status straight
 * to exit(). src/ never exits; it returns one of these and writes a message
 * that names the problem's place into the caller's error buffer. */
#ifndef MHAVIZ_STATUS_H
#define MHAVIZ_STATUS_H

#include <stddef.h>

enum {
    MHAVIZ_OK = 0,      /* success */
    MHAVIZ_EINPUT = 1,  /* invalid input: syntax, type, shape, value, limit */
    MHAVIZ_EUSAGE = 2,  /* bad command line (only cli/ produces this) */
    MHAVIZ_EIO = 3,     /* file system: cannot read input / write outputs */
    MHAVIZ_ENOMEM = 4   /* out of memory */
};

/* Size of the error buffers passed around (message + place). */
#define MHAVIZ_ERRLEN 512

#endif
