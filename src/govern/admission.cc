#include "govern/admission.h"

#include <algorithm>

namespace abacus::govern {
namespace {

bool IsLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool IsRepoChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' || c == '/';
}

bool IsTagChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out.empty() ? "none" : out;
}

std::string Milli(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

// Saturating a*b for non-negative values.
int64_t Mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > INT64_MAX / b) return INT64_MAX;
  return a * b;
}
int64_t Add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

Status Deny(const AdmissionPolicy& p, std::string why) { return PermissionDenied("policy " + p.name + ": " + why); }

// The pools a workload names explicitly: an inference reservation pool and nodeSelector pools.
std::vector<std::string> RequestedPools(const Workload& w) {
  std::vector<std::string> out;
  if (const InferenceSpec* inf = w.inference(); inf != nullptr && inf->reservation && !inf->reservation->pool.empty()) {
    out.push_back(inf->reservation->pool);
  }
  for (const auto& g : w.spec.task_groups) {
    auto it = g.node_selector.find(std::string(kPoolLabel));
    if (it != g.node_selector.end() && std::find(out.begin(), out.end(), it->second) == out.end()) {
      out.push_back(it->second);
    }
  }
  return out;
}

Status CheckImage(const AdmissionPolicy& p, const Workload& w, std::string_view tenant) {
  const std::string& image = w.spec.image;
  bool digest_required = std::find(p.require_digest_for.begin(), p.require_digest_for.end(), w.priority_class) !=
                         p.require_digest_for.end();
  if (image.empty()) {
    if (p.require_image) {
      return Deny(p, "workloads of tenant " + std::string(tenant) + " must run an image (spec.image is empty)");
    }
    if (digest_required) {
      return Deny(p, "priority class " + w.priority_class +
                         " requires an image pinned by digest (image@sha256:…), but spec.image is empty");
    }
    return Status::OK();
  }
  auto ref = ParseImageRef(image);
  if (!ref.ok()) return Deny(p, "image '" + image + "': " + ref.status().message());
  if (p.allowed_registries &&
      std::find(p.allowed_registries->begin(), p.allowed_registries->end(), ref->registry) ==
          p.allowed_registries->end()) {
    return Deny(p, "image registry " + ref->registry + " is not allowed for tenant " + std::string(tenant) +
                       " (allowed: " + Join(*p.allowed_registries) + ")");
  }
  if (digest_required && ref->digest.empty()) {
    return Deny(p, "priority class " + w.priority_class + " requires an image pinned by digest (image@sha256:…), got '" +
                       image + "'");
  }
  return Status::OK();
}

// spec.secrets: every Secret the work of a covered queue references must match an allowed
// name or prefix ("hf-*").
Status CheckSecrets(const AdmissionPolicy& p, const Workload& w) {
  if (!p.allowed_secrets) return Status::OK();
  if (!p.secret_queues.empty() &&
      std::find(p.secret_queues.begin(), p.secret_queues.end(), w.queue) == p.secret_queues.end()) {
    return Status::OK();
  }
  for (const std::string& name : w.spec.SecretNames()) {
    bool allowed = false;
    for (const std::string& rule : *p.allowed_secrets) {
      if (!rule.empty() && rule.back() == '*' ? name.rfind(rule.substr(0, rule.size() - 1), 0) == 0 : name == rule) {
        allowed = true;
        break;
      }
    }
    if (!allowed) {
      return Deny(p, "rule secrets.allowed: secret " + name + " may not be referenced by work of queue " + w.queue +
                         " (allowed: " + (p.allowed_secrets->empty() ? std::string("none") : Join(*p.allowed_secrets)) +
                         ")");
    }
  }
  return Status::OK();
}

Status CheckMounts(const AdmissionPolicy& p, const Workload& w, std::string_view tenant) {
  if (!p.mounts) return Status::OK();
  for (const DataMount& m : w.spec.mounts) {
    if (Status st = CheckMountPath(m.path); !st.ok()) return Deny(p, "mount path " + st.message());
    const MountRule* covering = nullptr;
    const MountRule* writable = nullptr;
    for (const MountRule& r : *p.mounts) {
      if (!PathWithin(m.path, r.path_prefix)) continue;
      if (covering == nullptr) covering = &r;
      if (r.read_write && writable == nullptr) writable = &r;
    }
    if (covering == nullptr) {
      std::vector<std::string> prefixes;
      for (const MountRule& r : *p.mounts) {
        prefixes.push_back(r.path_prefix + (r.read_write ? " (read-write)" : " (read-only)"));
      }
      return Deny(p, "mount " + m.path + " is not allowed for tenant " + std::string(tenant) +
                         " (allowed: " + Join(prefixes) + ")");
    }
    if (!m.read_only && writable == nullptr) {
      return Deny(p, "mount " + m.path + " may only be read-only for tenant " + std::string(tenant) + " (" +
                         covering->path_prefix + " is read-only); set readOnly: true");
    }
  }
  return Status::OK();
}

Status CheckResources(const AdmissionPolicy& p, const WorkloadFootprint& f) {
  const ResourceCeiling& c = p.max_resources;
  if (c.cpu && f.cpu_milli > c.cpu->milli()) {
    return Deny(p, "workload needs cpu " + Milli(f.cpu_milli) + " in all, above the maximum " + c.cpu->ToString());
  }
  if (c.memory && f.memory_bytes > c.memory->CeilUnits()) {
    Quantity need = Quantity::FromMilli(Mul(f.memory_bytes, 1000), Quantity::Format::kBinary);
    return Deny(p, "workload needs memory " + need.ToString() + " in all, above the maximum " + c.memory->ToString());
  }
  if (c.devices && f.device_milli > c.devices->milli()) {
    return Deny(p, "workload needs " + Milli(f.device_milli) + " devices in all, above the maximum " +
                       c.devices->ToString());
  }
  return Status::OK();
}

}  // namespace

Result<ImageRef> ParseImageRef(std::string_view image) {
  if (image.empty()) return InvalidArgument("empty image reference");
  ImageRef ref;
  std::string_view rest = image;
  // 1) Digest after '@'.
  if (size_t at = rest.find('@'); at != std::string_view::npos) {
    std::string_view digest = rest.substr(at + 1);
    if (digest.substr(0, 7) != "sha256:" || digest.size() != 7 + 64 || !IsLowerHex(digest.substr(7))) {
      return InvalidArgument("digest must be sha256:<64 lower-case hex characters>");
    }
    ref.digest = std::string(digest);
    rest = rest.substr(0, at);
  }
  // 2) Registry: the first component when it looks like a host (has '.' or ':', or is localhost).
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view first = rest.substr(0, slash);
    if (first.find('.') != std::string_view::npos || first.find(':') != std::string_view::npos ||
        first == "localhost") {
      ref.registry = std::string(first);
      rest = rest.substr(slash + 1);
    }
  }
  if (ref.registry.empty()) ref.registry = "docker.io";
  for (char c : ref.registry) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':';
    if (!ok) return InvalidArgument("invalid registry '" + ref.registry + "'");
  }
  std::transform(ref.registry.begin(), ref.registry.end(), ref.registry.begin(),
                 [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  // 3) Tag after the last ':' of the remaining path.
  if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    ref.tag = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
    if (ref.tag.empty() || ref.tag.size() > 128 || !std::all_of(ref.tag.begin(), ref.tag.end(), IsTagChar)) {
      return InvalidArgument("invalid tag '" + ref.tag + "'");
    }
  }
  if (rest.empty() || rest.front() == '/' || rest.back() == '/' || rest.find("//") != std::string_view::npos ||
      !std::all_of(rest.begin(), rest.end(), IsRepoChar)) {
    return InvalidArgument("invalid repository '" + std::string(rest) + "' (lower-case letters, digits, . _ - /)");
  }
  ref.repository = std::string(rest);
  return ref;
}

WorkloadFootprint FootprintOf(const Workload& w) {
  int64_t multiplier = 1;
  if (const InferenceSpec* inf = w.inference()) multiplier = std::max<int64_t>({1, inf->replicas, inf->max_replicas});
  if (const BatchSpec* b = w.batch()) multiplier = std::max<int64_t>(1, std::min(b->parallelism, b->tasks));
  WorkloadFootprint f;
  for (const TaskGroup& g : w.spec.task_groups) {
    int64_t tasks = Mul(std::max<int64_t>(0, g.replicas), multiplier);
    const ResourceRequest& r = g.resources;
    f.cpu_milli = Add(f.cpu_milli, Mul(std::max<int64_t>(0, r.cpu.milli()), tasks));
    f.memory_bytes = Add(f.memory_bytes, Mul(std::max<int64_t>(0, r.memory.CeilUnits()), tasks));
    if (r.accelerators) {
      int64_t per_task = r.accelerators->share ? *r.accelerators->share : Mul(std::max(0, r.accelerators->count), 1000);
      f.device_milli = Add(f.device_milli, Mul(per_task, tasks));
    }
  }
  return f;
}

Result<Admission> EvaluateAdmission(const Workload& w, std::string_view tenant,
                                    const std::vector<AdmissionPolicy>& policies) {
  Admission out;
  const WorkloadFootprint footprint = FootprintOf(w);
  const std::vector<std::string> requested = RequestedPools(w);
  std::optional<std::vector<std::string>> pools;  // intersection so far; nullopt: any
  std::string pools_from;                         // policies that narrowed `pools`
  for (const AdmissionPolicy& p : policies) {
    if (!p.AppliesTo(tenant)) continue;
    out.policies.push_back(p.name);
    // 1) Images, 2) mounts, 3) resources.
    ABACUS_RETURN_IF_ERROR(CheckImage(p, w, tenant));
    ABACUS_RETURN_IF_ERROR(CheckMounts(p, w, tenant));
    ABACUS_RETURN_IF_ERROR(CheckSecrets(p, w));
    ABACUS_RETURN_IF_ERROR(CheckResources(p, footprint));
    if (const auto& classes = p.allowed_priority_classes;
        classes && std::find(classes->begin(), classes->end(), w.priority_class) == classes->end()) {
      return Deny(p, "priority class " + w.priority_class + " is not allowed for tenant " + std::string(tenant) +
                         " (allowed: " + Join(*classes) + ")");
    }
    // 4) Pools: every pool the workload names must be allowed; the allowed sets intersect.
    if (!p.pools.empty()) {
      for (const auto& name : requested) {
        if (std::find(p.pools.begin(), p.pools.end(), name) == p.pools.end()) {
          return Deny(p, "pool " + name + " is not allowed for tenant " + std::string(tenant) +
                             " (allowed: " + Join(p.pools) + ")");
        }
      }
      if (!pools) {
        pools = p.pools;
        pools_from = p.name;
      } else {
        std::vector<std::string> common;
        for (const auto& name : *pools) {
          if (std::find(p.pools.begin(), p.pools.end(), name) != p.pools.end()) common.push_back(name);
        }
        if (common.empty()) {
          return Deny(p, "its pools (" + Join(p.pools) + ") share none with policy " + pools_from + " (" +
                             Join(*pools) + ")");
        }
        pools = std::move(common);
        pools_from += ", " + p.name;
      }
    }
    // 5) Network: the most restrictive class wins.
    if (p.network && (!out.network || *p.network < *out.network)) out.network = p.network;
  }
  if (pools) out.pools = std::move(*pools);
  return out;
}

}  // namespace abacus::govern
