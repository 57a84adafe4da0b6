// Names of the record forms RecordCensus counts (docs/info.md, "Where the bytes go").
#include "format/record_census.hpp"

namespace callmon::format {

const char* record_form_key(RecordForm form) {
  switch (form) {
    case kFormEnterGuessed: return "enter_guessed";
    case kFormEnterCached: return "enter_cached";
    case kFormEnterNew: return "enter_new";
    case kFormEnterV5: return "enter";
    case kFormExit: return "exit";
    case kFormNested: return "nested";
    case kFormValues: return "values";
    case kFormOther: break;
  }
  return "other";
}

const char* record_form_text(RecordForm form) {
  switch (form) {
    case kFormEnterGuessed: return "ENTER, guessed callee";
    case kFormEnterCached: return "ENTER, cached address";
    case kFormEnterNew: return "ENTER, new address";
    case kFormEnterV5: return "ENTER (version 1-5)";
    case kFormExit: return "EXIT";
    case kFormNested: return "nested ENTER/EXIT";
    case kFormValues: return "ARGS/RETVAL";
    case kFormOther: break;
  }
  return "other records";
}

}  // namespace callmon::format
