/* Session 47: which /proc files CUDA's start opens for writing, which sockets and socketpairs it makes and whose
 * scheduling it sets, logged to stderr by an LD_PRELOAD shim (the process level refuses datagram pairs, and on a CPU
 * grading scheduling calls for another pid: whether CUDA needs them decides whether a GPU grading can be refused them).   gcc -shared -fPIC -o shim.so s47_cuda_calls.c -ldl; LD_PRELOAD=./shim.so python -c ... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static void note_open(const char *fn, const char *path, int flags) {
    if (path && strncmp(path, "/proc", 5) == 0 && (flags & (O_WRONLY | O_RDWR)))
        dprintf(2, "shim %s %s flags=%#x\n", fn, path, flags);
}

#define OPEN_LIKE(name)                                                              \
    int name(const char *path, int flags, ...) {                                      \
        static int (*real)(const char *, int, ...);                                   \
        va_list ap; va_start(ap, flags); int mode = va_arg(ap, int); va_end(ap);      \
        if (!real) real = dlsym(RTLD_NEXT, #name);                                    \
        note_open(#name, path, flags);                                                \
        return real(path, flags, mode);                                               \
    }
OPEN_LIKE(open)
OPEN_LIKE(open64)

#define OPENAT_LIKE(name)                                                            \
    int name(int dir, const char *path, int flags, ...) {                             \
        static int (*real)(int, const char *, int, ...);                              \
        va_list ap; va_start(ap, flags); int mode = va_arg(ap, int); va_end(ap);      \
        if (!real) real = dlsym(RTLD_NEXT, #name);                                    \
        note_open(#name, path, flags);                                                \
        return real(dir, path, flags, mode);                                          \
    }
OPENAT_LIKE(openat)
OPENAT_LIKE(openat64)

#define FOPEN_LIKE(name)                                                             \
    FILE *name(const char *path, const char *mode) {                                  \
        static FILE *(*real)(const char *, const char *);                             \
        if (!real) real = dlsym(RTLD_NEXT, #name);                                    \
        if (path && strncmp(path, "/proc", 5) == 0 && strpbrk(mode, "wa+"))            \
            dprintf(2, "shim %s %s mode=%s\n", #name, path, mode);                     \
        return real(path, mode);                                                      \
    }
FOPEN_LIKE(fopen)
FOPEN_LIKE(fopen64)

int socket(int family, int type, int protocol) {
    static int (*real)(int, int, int);
    if (!real) real = dlsym(RTLD_NEXT, "socket");
    int fd = real(family, type, protocol);
    dprintf(2, "shim socket family=%d type=%#x protocol=%d -> %d\n", family, type, protocol, fd);
    return fd;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real)(int, const struct sockaddr *, socklen_t);
    if (!real) real = dlsym(RTLD_NEXT, "connect");
    int r = real(fd, addr, len);
    dprintf(2, "shim connect fd=%d family=%d path=%s -> %d\n", fd, addr ? addr->sa_family : -1,
            addr && addr->sa_family == AF_UNIX ? ((const char *)addr) + 2 : "", r);
    return r;
}

int socketpair(int family, int type, int protocol, int sv[2]) {
    static int (*real)(int, int, int, int *);
    if (!real) real = dlsym(RTLD_NEXT, "socketpair");
    int r = real(family, type, protocol, sv);
    dprintf(2, "shim socketpair family=%d type=%#x protocol=%d -> %d\n", family, type, protocol, r);
    return r;
}

#include <sched.h>
#include <sys/resource.h>

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set) {
    static int (*real)(pid_t, size_t, const cpu_set_t *);
    if (!real) real = dlsym(RTLD_NEXT, "sched_setaffinity");
    dprintf(2, "shim sched_setaffinity pid=%d\n", pid);
    return real(pid, size, set);
}

int pthread_setaffinity_np(unsigned long thread, size_t size, const cpu_set_t *set) {
    static int (*real)(unsigned long, size_t, const cpu_set_t *);
    if (!real) real = dlsym(RTLD_NEXT, "pthread_setaffinity_np");
    dprintf(2, "shim pthread_setaffinity_np\n");
    return real(thread, size, set);
}

int pthread_setschedparam(unsigned long thread, int policy, const struct sched_param *param) {
    static int (*real)(unsigned long, int, const struct sched_param *);
    if (!real) real = dlsym(RTLD_NEXT, "pthread_setschedparam");
    dprintf(2, "shim pthread_setschedparam policy=%d\n", policy);
    return real(thread, policy, param);
}

int sched_setscheduler(pid_t pid, int policy, const struct sched_param *param) {
    static int (*real)(pid_t, int, const struct sched_param *);
    if (!real) real = dlsym(RTLD_NEXT, "sched_setscheduler");
    dprintf(2, "shim sched_setscheduler pid=%d policy=%d\n", pid, policy);
    return real(pid, policy, param);
}

int setpriority(__priority_which_t which, id_t who, int prio) {
    static int (*real)(__priority_which_t, id_t, int);
    if (!real) real = dlsym(RTLD_NEXT, "setpriority");
    dprintf(2, "shim setpriority which=%d who=%d prio=%d\n", which, (int)who, prio);
    return real(which, who, prio);
}
