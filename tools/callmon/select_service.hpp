// The name-filter service of `callmon record --include/--exclude`: a thread that answers the
// runtime's questions "which addresses of this ELF file are selected?" on an
// abstract-namespace Unix socket (include/callmon/select_protocol.hpp), with the analysis
// layer's symbol tables, demangler and regexes, so record-time and analysis-time filters
// decide every function the same way. Each file is read once per recording and its answer
// kept (a fork storm asks about the same libraries again and again).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "analysis/arg_spec.hpp"
#include "analysis/filters.hpp"
#include "format/result.hpp"

namespace callmon::tools {

class SelectService {
 public:
  // Starts listening and serving. Besides the name filter's ranges, each answer carries the
  // argument specs of the module's functions that `arg_rules` (-A/-R) or, with `auto_args`,
  // their DWARF name. The address is in address(), for CALLMON_SELECT ("@name#key"): only
  // requests with the key, about a file the asking process has mapped, are answered; a
  // client that sends nothing is dropped after 2 s without delaying others. Asking
  // processes are callmon's user's or its descendants, and `attached` (the process
  // `record -p` attaches to, which may be another user's when callmon runs as root) and
  // its descendants. Errors: the socket cannot be created, the thread cannot be started.
  static Result<std::unique_ptr<SelectService>> start(analysis::FilterSet filters,
                                                      std::vector<analysis::ArgRule> arg_rules = {},
                                                      bool auto_args = false,
                                                      pid_t attached = 0);
  // Stops the thread and closes the socket. Programs still running (a daemon child that
  // outlived the recorded one) then record new modules unfiltered, with one warning.
  ~SelectService();
  SelectService(const SelectService&) = delete;
  SelectService& operator=(const SelectService&) = delete;

  const std::string& address() const { return address_; }

 private:
  struct Impl;
  explicit SelectService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::string address_;
};

}  // namespace callmon::tools
