/*
 * A preload shim that undoes one libfaketime bug, loaded before libfaketime in every process
 * fencecheck starts under a fake wall clock (containers/src/control/clock.rs). It is part of
 * the fault injector, not of the program under test.
 *
 * The bug (libfaketime issue #426, in Debian bookworm's libfaketime 0.9.10, fixed upstream in
 * 0.9.11): libfaketime's clock_nanosleep() converts an absolute deadline (TIMER_ABSTIME) from
 * fake to real time for CLOCK_MONOTONIC even when FAKETIME_DONT_FAKE_MONOTONIC=1 says the
 * monotonic clock is not faked. It subtracts the fake wall clock's start (about 1.8e9 s) from a
 * deadline on the real monotonic clock (the seconds since boot), and the kernel refuses the
 * negative time with EINVAL. Python 3.11's time.sleep() sleeps exactly that way, so under the
 * faked clock every time.sleep() raised "OSError: [Errno 22] Invalid argument".
 *
 * The fix, and only it: while the monotonic clock is not faked, an absolute CLOCK_MONOTONIC
 * deadline was read by the caller from the real monotonic clock and is already the kernel's, so
 * it goes to the kernel unchanged (the raw syscall), as libfaketime 0.9.11 does. Every other
 * call, CLOCK_REALTIME deadlines and relative sleeps included, goes to the next definition
 * (libfaketime's, or glibc's) as before.
 *
 * Why the program under test sees the same wall clock: the shim reads and wraps no clock
 * (clock_gettime, gettimeofday and time stay libfaketime's, moved by the fault) and changes no
 * realtime deadline; a monotonic deadline does not depend on the wall clock at all.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

static clock_nanosleep_fn next_clock_nanosleep;
static int monotonic_is_real;

/* Read once at load, as libfaketime reads its settings: FAKETIME_DONT_FAKE_MONOTONIC, else its
 * older name DONT_FAKE_MONOTONIC, equal to "1". */
__attribute__((constructor)) static void monotonic_sleep_init(void)
{
    const char *v = getenv("FAKETIME_DONT_FAKE_MONOTONIC");
    if (v == NULL)
        v = getenv("DONT_FAKE_MONOTONIC");
    monotonic_is_real = v != NULL && strcmp(v, "1") == 0;
    next_clock_nanosleep = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
}

int clock_nanosleep(clockid_t clock_id, int flags, const struct timespec *req,
                    struct timespec *rem)
{
    if (clock_id == CLOCK_MONOTONIC && (flags & TIMER_ABSTIME) && monotonic_is_real) {
        /* clock_nanosleep answers an error number and leaves errno alone. */
        int saved = errno;
        int err = syscall(SYS_clock_nanosleep, clock_id, flags, req, rem) == 0 ? 0 : errno;
        errno = saved;
        return err;
    }
    if (next_clock_nanosleep == NULL)
        return ENOSYS;
    return next_clock_nanosleep(clock_id, flags, req, rem);
}
