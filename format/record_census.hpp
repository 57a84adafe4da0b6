// Where a thread file's bytes go: records and bytes by record form (the ENTER forms of each
// version, EXIT, the rest), and for ENTER records the bytes of the address field apart from
// the head (time and form). Fed one event at a time by a caller that reads the file anyway
// (`callmon info`), from the forms the reader notes on each event.
#pragma once

#include <array>
#include <cstdint>

#include "format/thread_reader.hpp"

namespace callmon::format {

struct RecordCensus {
  struct Form {
    uint64_t records = 0;
    uint64_t bytes = 0;       // the whole records (PAD filler before one counts with it)
    uint64_t addr_bytes = 0;  // ENTER: the address delta's bytes (the rest is the head)
  };
  std::array<Form, kRecordForms> forms{};

  // Counts `ev`, whose record (with any PAD before it) took `bytes` bytes.
  void add(const Event& ev, uint64_t bytes) {
    Form& f = forms[ev.form];
    ++f.records;
    f.bytes += bytes;
    f.addr_bytes += ev.addr_bytes;
  }
  void merge(const RecordCensus& o) {
    for (size_t i = 0; i < forms.size(); ++i) {
      forms[i].records += o.forms[i].records;
      forms[i].bytes += o.forms[i].bytes;
      forms[i].addr_bytes += o.forms[i].addr_bytes;
    }
  }
  uint64_t bytes() const {
    uint64_t n = 0;
    for (const Form& f : forms) n += f.bytes;
    return n;
  }
};

// The forms in the order `info` lists them: ENTER's, EXIT, the rest.
inline constexpr std::array<RecordForm, kRecordForms> kCensusOrder = {
    kFormEnterGuessed, kFormEnterCached, kFormEnterNew, kFormEnterV5,
    kFormExit,         kFormNested,      kFormValues,   kFormOther};

// Short names of the forms for JSON ("enter_guessed", ...) and their descriptions for text.
const char* record_form_key(RecordForm form);
const char* record_form_text(RecordForm form);

}  // namespace callmon::format
