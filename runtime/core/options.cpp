// Reads the runtime options table (options.hpp) from the environment.
#include "runtime/core/options.hpp"

#include "runtime/core/sys.hpp"

namespace callmon::rt {

Options read_options() {
  Options o{};
#define CALLMON_OPTION_READ(field, env, def, desc) \
  o.field = env_get(env);                          \
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
