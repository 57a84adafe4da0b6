// Programs the runtime cannot get into: the dynamic loader runs a program that gains
// privileges when executed (set-user-ID, set-group-ID, file capabilities) in secure mode and
// ignores LD_PRELOAD, and a statically linked program has no loader at all, so `record`,
// `trace`, `inject`, `run` and `coverage` would see nothing. They ask here first and say why before the program runs (docs/security.md, "Privilege boundaries").
#pragma once

#include <optional>
#include <string>

#include "tools/callmon/program_elf.hpp"

namespace callmon::tools {

// Why `program` (a resolved path) would run with privileges the caller does not have, in
// words for an error message ("is set-user-ID root (...)"), or nothing when it would not:
// no set-ID bit or capability, a bit that changes nothing (the caller is the file's owner,
// or in its group), a file system mounted nosuid, or a script (Linux ignores the bits of
// `#!` files). Looks only at the file: its mode bits and its security.capability xattr.
std::optional<std::string> privilege_gain(const std::string& program);

// The error for a command that would preload the runtime into `program` (shown as `shown`,
// the user's spelling) when privilege_gain finds something or the program is statically
// linked, else nothing: says why the runtime cannot get in so nothing would be seen, that
// it was not run, and what to do instead. `elf`: the program's facts when the caller read
// them already (else read here).
std::optional<std::string> preload_refusal(const std::string& program, const std::string& shown,
                                           const ProgramElf* elf = nullptr);

}  // namespace callmon::tools
