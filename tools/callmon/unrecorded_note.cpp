// warn_unrecorded_modules (unrecorded_note.hpp).
#include "tools/callmon/unrecorded_note.hpp"

#include "analysis/unrecorded_modules.hpp"
#include "format/recording.hpp"
#include "tools/callmon/command.hpp"

namespace callmon::tools {

void warn_unrecorded_modules(const std::string& command, const std::string& dir) {
  auto rec = format::open_recording(dir);
  if (!rec) return;
  std::string s = analysis::dlmopen_sentence(analysis::dlmopen_modules(*rec));
  if (!s.empty()) warn(command, s + " (docs/record.md, \"dlmopen\")");
}

}  // namespace callmon::tools
