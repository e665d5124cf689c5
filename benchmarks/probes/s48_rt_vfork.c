/* s48_rt_vfork.py's helper: vfork a child that counts in a shared file's first word (argv[1]) forever; the parent
   waits in the vfork (state D) for an exec or exit that never comes. Mode "thread" (argv[2]): a second thread of
   the parent counts in the second word meanwhile. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
static volatile uint64_t *c;
static void *other(void *a) { (void)a; for (;;) c[1]++; return 0; }
int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDWR);
    c = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    pthread_t t;
    if (argc > 2 && !strcmp(argv[2], "thread")) pthread_create(&t, 0, other, 0);
    if (vfork() == 0) { for (;;) c[0]++; }
    return 0;
}
