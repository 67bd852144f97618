// Workload names (docs/api.md, "WORKLOAD arguments"): a name resolves only among the workloads
// the caller may see, never to a guess across projects, and one project holds at most one active
// workload of a name (a second submission is refused with 409 naming the first, as kubectl
// does; finished ones do not count).
#include <algorithm>
#include <map>
#include <set>

#include "common/mutex.h"
#include "server/control_plane.h"

namespace abacus::server {

Result<std::string> ControlPlane::ResolveWorkload(const std::string& id_or_name,
                                                  const std::function<bool(const Workload&)>& visible) const {
  auto shown = [&](const WorkloadRecord& r) { return !visible || visible(r.spec); };
  const std::string missing = "workload '" + id_or_name + "' not found";
  std::vector<WorkloadRecord> named;  // copies: the locks are let go before deciding
  {
    ReaderLock lock(state_mu_);
    if (const WorkloadRecord* r = ledger_.FindWorkload(id_or_name)) {
      if (!shown(*r)) return NotFound(missing);
      return r->id;
    }
    for (const WorkloadRecord* r : ledger_.Named(id_or_name)) {
      if (shown(*r)) named.push_back(*r);
    }
    // Not yet in the ledger: the loop moves them under this lock, so each is in one of the two.
    for (const WorkloadRecord& r : inbox_.Matching(id_or_name)) {
      if (r.id == id_or_name) {
        if (!shown(r)) return NotFound(missing);
        return r.id;
      }
      if (r.spec.name == id_or_name && shown(r)) named.push_back(r);
    }
  }
  if (named.empty()) return NotFound(missing);
  auto ambiguous = [&](const std::vector<const WorkloadRecord*>& rows, const std::string& what) {
    std::string ids;
    for (const WorkloadRecord* r : rows) {
      ids += (ids.empty() ? "" : ", ") + r->id + " (" + r->spec.project + ", " + std::string(WorkloadStateName(r->state)) + ")";
    }
    return FailedPrecondition("workload name '" + id_or_name + "' is ambiguous: " + what + ": " + ids +
                              "; name the workload by its id");
  };
  std::vector<const WorkloadRecord*> active, all;
  for (const auto& r : named) {
    all.push_back(&r);
    if (!IsTerminal(r.state)) active.push_back(&r);
  }
  if (active.size() == 1) return active[0]->id;
  if (active.size() > 1) return ambiguous(active, std::to_string(active.size()) + " active workloads have it");
  // None active: the latest run of that name, when they are all of one project.
  std::set<std::string> projects;
  for (const WorkloadRecord* r : all) projects.insert(r->spec.project);
  if (projects.size() > 1) {
    return ambiguous(all, "finished workloads of " + std::to_string(projects.size()) + " projects have it");
  }
  const WorkloadRecord* latest = *std::max_element(all.begin(), all.end(), [](const WorkloadRecord* a, const WorkloadRecord* b) {
    return a->submitted != b->submitted ? a->submitted < b->submitted : a->id < b->id;
  });
  return latest->id;
}

bool ControlPlane::IsActiveWorkload(const std::string& id) const {
  // Not in the ledger: in the inbox, or committed and on its way there (workloads are never
  // removed from the ledger), so active either way.
  ReaderLock lock(state_mu_);
  const WorkloadRecord* r = ledger_.FindWorkload(id);
  return r == nullptr || !IsTerminal(r->state);
}

namespace {

// Returns project/name → id for `records`, or AlreadyExists when one names a workload twice.
Result<std::map<std::string, std::string>> WantedNames(const std::vector<WorkloadRecord>& records) {
  std::map<std::string, std::string> wanted;
  for (const auto& r : records) {
    std::string key = r.spec.project + "/" + r.spec.name;
    if (!wanted.emplace(key, r.id).second) {
      return AlreadyExists("workload " + key + " is named twice in this submission: names are unique among a "
                           "project's active workloads");
    }
  }
  return wanted;
}

Status NameTaken(const std::string& key, const std::string& holder) {
  return AlreadyExists("workload " + key + " already exists and is active: " + holder +
                       " (one active workload per name and project; cancel it, wait for it to finish, or choose "
                       "another name)");
}

}  // namespace

Status ControlPlane::CheckNamesFree(const std::vector<WorkloadRecord>& records) {
  ABACUS_ASSIGN_OR_RETURN(auto wanted, WantedNames(records));
  MutexLock lock(names_mu_);
  for (const auto& [key, id] : wanted) {
    auto it = active_names_.find(key);
    if (it != active_names_.end() && IsActiveWorkload(it->second)) return NameTaken(key, it->second);
  }
  return Status::OK();
}

Status ControlPlane::ClaimNames(const std::vector<WorkloadRecord>& records) {
  ABACUS_ASSIGN_OR_RETURN(auto wanted, WantedNames(records));
  MutexLock lock(names_mu_);
  for (const auto& [key, id] : wanted) {
    auto it = active_names_.find(key);
    if (it == active_names_.end()) continue;
    if (IsActiveWorkload(it->second)) return NameTaken(key, it->second);
    active_names_.erase(it);  // it finished: the name is free
  }
  for (const auto& [key, id] : wanted) active_names_[key] = id;
  return Status::OK();
}

void ControlPlane::ReleaseNames(const std::vector<WorkloadRecord>& records) {
  MutexLock lock(names_mu_);
  for (const auto& r : records) {
    auto it = active_names_.find(r.spec.project + "/" + r.spec.name);
    if (it != active_names_.end() && it->second == r.id) active_names_.erase(it);
  }
}

}  // namespace abacus::server
