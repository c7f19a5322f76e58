// Linux's epoll, which Glibc's Swift module does not bring in: one wait for many sockets whose
// cost follows the ready ones, not the watched ones.
#include <sys/epoll.h>
