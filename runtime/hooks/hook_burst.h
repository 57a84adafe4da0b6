/* The longest gap between two clock reads of one hook that is still the hook's own work (at
 * most a few hundred ticks): a longer one is the host taking the CPU, or an interrupt, and
 * becomes a PAUSE record under --clock=tsc-fenced (event_writer.hpp). About 0.5 us at 2 GHz.
 * A C header: the assembly hooks (arch/x86_64/cyg_hooks.S) compare against it too. */
#ifndef CALLMON_RUNTIME_HOOK_BURST_H
#define CALLMON_RUNTIME_HOOK_BURST_H

#define CALLMON_HOOK_BURST_TICKS 1024

#endif
