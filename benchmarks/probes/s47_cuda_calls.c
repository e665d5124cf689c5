/* Session 47: which /proc files CUDA's start opens for writing and which sockets it makes, logged to stderr by an
 * LD_PRELOAD shim.   gcc -shared -fPIC -o shim.so s47_cuda_calls.c -ldl; LD_PRELOAD=./shim.so python -c ... */
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
