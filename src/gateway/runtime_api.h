// A client of HAProxy's runtime API (the `stats socket` of the generated config): one command
// per connection on the unix socket, the answer read until HAProxy closes it.
#pragma once

#include <string>

#include "common/status.h"

namespace abacus::gateway {

class RuntimeApi {
 public:
  explicit RuntimeApi(std::string socket_path) : path_(std::move(socket_path)) {}

  // Sends `command` and returns HAProxy's answer; Unavailable when the socket does not answer.
  // A command HAProxy refused is InvalidArgument with its answer ("No such server.").
  Result<std::string> Send(const std::string& command) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace abacus::gateway
