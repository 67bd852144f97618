// Guards in front of yaml-cpp for text that comes from users (request bodies, spec files).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace abacus {

// Returns the 1-based line where YAML::LoadAll(text) would stop making progress, or nullopt.
// yaml-cpp 0.7 (Debian 12) loops forever, allocating, on a stream holding a stray flow entry
// such as "," (yaml-cpp issue #1040, fixed upstream by PR #1319 after 0.8.0): the parser
// reports an empty document without consuming the token, again and again. This walks the
// stream's events once without building nodes and stops at the first document that starts
// where the previous empty one did. Syntax errors are left for the real parse to report.
std::optional<int> FindYamlLoadAllLoop(std::string_view text);

}  // namespace abacus
