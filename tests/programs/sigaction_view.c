// What a program sees of its own signal handlers, which callmon runs inside a wrapper of
// its own (runtime/interposers/interpose_signal.cpp): the old action sigaction and signal
// return, SA_SIGINFO's arguments, SA_RESETHAND, SA_NODEFER and the handler's mask. Prints
// one line per check; the output must be the same with and without callmon.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile int hits, blocked_self, blocked_other, info_ok;

__attribute__((noinline)) static void plain(int sig) {
  sigset_t now;
  sigprocmask(SIG_BLOCK, NULL, &now);
  hits++;
  blocked_self = sigismember(&now, sig);
  blocked_other = sigismember(&now, SIGUSR2);
}

__attribute__((noinline)) static void with_info(int sig, siginfo_t* si, void* uc) {
  hits++;
  info_ok = si && si->si_signo == sig && si->si_code == SI_TKILL && uc != NULL;
}

static void show(const char* what, int sig) {
  struct sigaction old;
  sigaction(sig, NULL, &old);
  const char* h = old.sa_handler == SIG_DFL                         ? "SIG_DFL"
                  : old.sa_handler == SIG_IGN                       ? "SIG_IGN"
                  : old.sa_handler == plain                         ? "plain"
                  : (void*)old.sa_sigaction == (void*)with_info ? "with_info"
                                                                    : "other";
  int flags = old.sa_flags & (SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_RESTART | SA_ONSTACK);
  printf("%s: handler %s flags %#x usr2-masked %d\n", what, h, flags,
         sigismember(&old.sa_mask, SIGUSR2));
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = plain;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGUSR2);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  show("installed", SIGUSR1);
  raise(SIGUSR1);
  printf("plain: hits %d self-blocked %d usr2-blocked %d\n", hits, blocked_self, blocked_other);

  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  struct sigaction prev;
  sigaction(SIGUSR1, &sa, &prev);  // the old action through the same call
  printf("previous: %s\n", prev.sa_handler == plain ? "plain" : "other");
  raise(SIGUSR1);
  printf("resethand+nodefer: hits %d self-blocked %d\n", hits, blocked_self);
  show("after reset", SIGUSR1);

  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = with_info;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &sa, &sa);  // act and old the same struct
  printf("same struct old: %s\n", sa.sa_handler == SIG_DFL ? "SIG_DFL" : "other");
  show("siginfo", SIGUSR1);
  raise(SIGUSR1);
  printf("siginfo: hits %d info %d\n", hits, info_ok);

  void (*was)(int) = signal(SIGUSR1, plain);
  printf("signal returned %s\n", (void*)was == (void*)with_info ? "with_info" : "other");
  show("signal", SIGUSR1);
  raise(SIGUSR1);
  was = signal(SIGUSR1, SIG_IGN);
  printf("signal returned %s, hits %d\n", was == plain ? "plain" : "other", hits);
  show("ignored", SIGUSR1);
  raise(SIGUSR1);
  was = sysv_signal(SIGUSR1, plain);
  printf("sysv_signal returned %s\n", was == SIG_IGN ? "SIG_IGN" : "other");
  show("sysv", SIGUSR1);
  raise(SIGUSR1);
  show("sysv after", SIGUSR1);
  printf("hits %d\n", hits);
  return 0;
}
