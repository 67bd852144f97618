#include "agent/runtime/network.h"

namespace abacus::agent {

Status ValidateNetworkClass(std::string_view network_class) {
  if (network_class.empty() || network_class == "isolated" || network_class == "internal" ||
      network_class == "internet") {
    return Status::OK();
  }
  return InvalidArgument("network class '" + std::string(network_class) +
                         "' is unknown (expected isolated, internal or internet)");
}

Result<std::string> ContainerNetworkFor(std::string_view network_class) {
  ABACUS_RETURN_IF_ERROR(ValidateNetworkClass(network_class));
  if (network_class == "isolated") return std::string("none");
  if (network_class == "internal") return std::string(kInternalNetworkName);
  return std::string();
}

Status AddNetworkClass(std::string_view network_class, std::map<std::string, std::string>& env) {
  ABACUS_RETURN_IF_ERROR(ValidateNetworkClass(network_class));
  if (!network_class.empty()) env[kNetworkClassVariable] = std::string(network_class);
  return Status::OK();
}

}  // namespace abacus::agent
