// Linked into the suites declared SINGLE_THREADED (spindle_add_test in tests/CMakeLists.txt):
// parsers, codecs and maths that start no thread. ThreadSanitizer can report nothing in a process
// with one thread, so the tsan build leaves these suites out; here the claim is checked in every
// build that runs them. This definition of pthread_create takes the place of the C library's for
// the whole process (std::thread's too), and ends the process saying so.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>

extern "C" int pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*) noexcept {
  std::fputs(
      "this suite is declared SINGLE_THREADED (tests/CMakeLists.txt) but started a thread: drop "
      "SINGLE_THREADED so that ThreadSanitizer runs it\n",
      stderr);
  std::abort();
}
