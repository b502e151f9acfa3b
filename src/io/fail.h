/* Recording why an open failed (fe_io_last_fail, fe_io_fail_str in feroce/io.h): the backends
 * call these where a system call fails, beside returning their fe_err. */
#ifndef FE_IO_FAIL_H
#define FE_IO_FAIL_H

/* Forgets the previous failure: every open starts with it, so a failure that is not a system
 * call's (a bad configuration, memory) does not show the cause of an older one. */
void fe_io_fail_clear(void);

/* Records that system call `step` ("bind", "raw socket", "SO_TIMESTAMPNS", ...) just failed with
 * errno. perm_hint: what EPERM or EACCES means at this step ("needs root or CAP_NET_RAW"), NULL
 * when nothing is worth adding. Returns code; errno is left as it was. */
int fe_io_fail_os(int code, const char *step, const char *perm_hint);

/* The same with a cause worded by the caller instead of strerror, and whole: the step is not
 * named before it (a lookup that found nothing: "no such interface"). */
int fe_io_fail_text(int code, const char *step, int os_errno, const char *text);

#endif
