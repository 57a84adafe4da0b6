// Reads the runtime options table (options.hpp) from the environment.
#include "runtime/core/options.hpp"

#include <string.h>

#include "runtime/core/sys.hpp"

namespace callmon::rt {

namespace {

// set_options_text's copy, its lines cut into NUL-terminated "NAME=value" strings.
char g_text[16384];
bool g_text_on = false;

const char* text_get(const char* name) {
  size_t n = strlen(name);
  for (const char* p = g_text; p < g_text + sizeof g_text && *p; p += strlen(p) + 1)
    if (strncmp(p, name, n) == 0 && p[n] == '=') return p + n + 1;
  return nullptr;
}

}  // namespace

void set_options_text(const char* text) {
  g_text_on = false;
  if (!text) return;
  copy_str(g_text, sizeof g_text - 1, text);
  g_text[sizeof g_text - 1] = 0;
  size_t len = strlen(g_text);
  for (size_t i = 0; i < len; ++i)
    if (g_text[i] == '\n') g_text[i] = 0;
  g_text[len + 1 < sizeof g_text ? len + 1 : sizeof g_text - 1] = 0;  // the list's end
  g_text_on = true;
}

Options read_options() {
  Options o{};
#define CALLMON_OPTION_READ(field, env, def, desc)   \
  o.field = g_text_on ? text_get(env) : env_get(env); \
  if (!o.field) o.field = def;
  CALLMON_RUNTIME_OPTIONS(CALLMON_OPTION_READ)
#undef CALLMON_OPTION_READ
  return o;
}

uint64_t parse_u64(const char* s, uint64_t fallback) {
  if (!s || !*s) return fallback;
  uint64_t v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return fallback;
    v = v * 10 + static_cast<uint64_t>(*s - '0');
  }
  return v;
}

double parse_double(const char* s) {
  if (!s || !*s) return 0;
  double v = 0, scale = 0;
  for (; *s; ++s) {
    if (*s == '.' && scale == 0) {
      scale = 1;
    } else if (*s >= '0' && *s <= '9') {
      v = v * 10 + (*s - '0');
      if (scale) scale *= 10;
    } else {
      return 0;
    }
  }
  return scale ? v / scale : v;
}

}  // namespace callmon::rt
