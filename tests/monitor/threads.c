/* Monitor fixture: 4 threads call work() 5000 times each; main calls it once. */
#include <pthread.h>

__attribute__((noinline)) int work(int x) {
  asm volatile("");
  return x ^ 0x55;
}

static void* run(void* arg) {
  int s = 0;
  for (int i = 0; i < 5000; i++) s += work(i);
  return (void*)(long)(s + (long)arg);
}

int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, run, (void*)i);
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  return work(1) == (1 ^ 0x55) ? 0 : 1;
}
