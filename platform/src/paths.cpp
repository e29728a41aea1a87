#include "spindle/platform/paths.h"

#include <SDL.h>

namespace spindle::platform {

namespace {

// SDL returns a malloc'd string, or null with SDL_GetError() set.
core::Result<std::string> take(char* path, const std::string& what) {
  if (path == nullptr) return core::Status::error("paths: " + what + ": " + SDL_GetError());
  std::string out(path);
  SDL_free(path);
  if (out.empty() || out.back() != '/') out.push_back('/');
  return out;
}

core::Status check_name(std::string_view name, const char* role) {
  if (name.empty() || name.size() > 255)
    return core::Status::error(std::string("paths: the ") + role + " name must be 1..255 bytes");
  for (const char c : name) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      return core::Status::error(std::string("paths: the ") + role + " name '" + std::string(name) +
                                 "' holds a path separator or a control character");
    }
  }
  return {};
}

}  // namespace

core::Result<std::string> base_path() {
  return take(SDL_GetBasePath(), "the program's folder");
}

core::Result<std::string> pref_path(std::string_view organisation, std::string_view application) {
  if (core::Status s = check_name(organisation, "organisation"); !s) return s;
  if (core::Status s = check_name(application, "application"); !s) return s;
  const std::string org(organisation), app(application);
  return take(SDL_GetPrefPath(org.c_str(), app.c_str()),
              "the preferences folder for '" + org + "/" + app + "'");
}

}  // namespace spindle::platform
