/* Why the last open on this thread failed (see feroce/io.h). Per thread as errno is: an open
 * that fails returns NULL and an fe_err, so the cause cannot live in the object, and changing
 * every open's signature for a message would ripple through every caller. */
#include "io/fail.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "feroce/io.h"

struct fail_rec {
    struct fe_io_fail pub;
    char text[192]; /* the cause for a person; "" when no system call failed */
};

static _Thread_local struct fail_rec last;

void fe_io_fail_clear(void)
{
    memset(&last, 0, sizeof last);
}

const struct fe_io_fail *fe_io_last_fail(void)
{
    return &last.pub;
}

const char *fe_io_fail_str(int err)
{
    return last.text[0] ? last.text : fe_strerror(err);
}

/* What the error means at this step beyond strerror's words, or NULL. */
static const char *hint_of(int e, const char *perm_hint)
{
    if (e == EPERM || e == EACCES) return perm_hint;
    if (e == EADDRNOTAVAIL) return "not an address of this host";
    if (e == EMFILE) return "the process's limit of open files, ulimit -n";
    return NULL;
}

/* named: the text starts with the step ("raw socket: operation not permitted"). */
static void record(const char *step, int os_errno, const char *why, const char *hint, bool named)
{
    fe_io_fail_clear();
    snprintf(last.pub.step, sizeof last.pub.step, "%s", step);
    last.pub.os_errno = os_errno;
    snprintf(last.text, sizeof last.text, "%s%s%s%s%s%s", named ? step : "", named ? ": " : "", why,
             hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
}

int fe_io_fail_os(int code, const char *step, const char *perm_hint)
{
    int e = errno;
    /* A bind is what the caller's message says it tried (it names the address); any other step
     * is named, being what a reader would not guess failed. */
    char why[96];
    snprintf(why, sizeof why, "%s", strerror(e));
    why[0] = (char)tolower((unsigned char)why[0]); /* it follows a colon in our messages */
    record(step, e, why, hint_of(e, perm_hint), strcmp(step, "bind") != 0);
    errno = e;
    return code;
}

int fe_io_fail_text(int code, const char *step, int os_errno, const char *text)
{
    int e = errno;
    record(step, os_errno, text, NULL, false);
    errno = e;
    return code;
}
