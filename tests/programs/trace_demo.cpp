// Fixture of tests/tools/run_trace.py: a small call tree with every kind of exit `callmon
// trace` marks (normal, exception, longjmp) and a second thread. Prints what it does on
// stdout (which the trace must leave alone) and exits with status 3.
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>

#include <stdexcept>

#include "fixture.h"

static volatile int sink;
static jmp_buf jump_back;

COUNTED void leaf(int i) { sink = sink + i; }

COUNTED void child(void) { leaf(1); }

COUNTED void parent(void) {
  child();
  leaf(2);
}

COUNTED void thrower(void) { throw std::runtime_error("boom"); }

COUNTED void catcher(void) {
  try {
    thrower();
  } catch (const std::exception& e) {
    printf("caught %s\n", e.what());
  }
}

COUNTED void jumper(void) { longjmp(jump_back, 1); }

COUNTED void* worker(void*) {
  leaf(3);
  return nullptr;
}

int main() {
  printf("start\n");
  parent();
  catcher();
  if (setjmp(jump_back) == 0) jumper();
  pthread_t t;
  pthread_create(&t, nullptr, worker, nullptr);
  pthread_join(t, nullptr);
  printf("end\n");
  return 3;
}
