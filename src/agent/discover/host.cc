#include "agent/discover/host.h"

#include <hwloc.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "agent/command.h"
#include "common/log.h"

namespace abacus::agent {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsHex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// hwloc's view: NUMA nodes and PCI functions. Returns false when hwloc cannot load.
bool ReadHwloc(HostInfo& host) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return false;
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return false;
  }
  int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  if (pus > 0) host.cpu_milli = int64_t{pus} * 1000;
  int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < numa; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    NumaNode node;
    node.index = static_cast<int>(obj->os_index);
    node.memory_bytes = static_cast<int64_t>(obj->attr->numanode.local_memory);
    node.cpus = obj->cpuset != nullptr ? hwloc_bitmap_weight(obj->cpuset) : 0;
    host.numa_nodes.push_back(node);
  }
  for (hwloc_obj_t obj = hwloc_get_next_pcidev(topo, nullptr); obj != nullptr;
       obj = hwloc_get_next_pcidev(topo, obj)) {
    const auto& a = obj->attr->pcidev;
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.%01x", static_cast<unsigned>(a.domain),
                  static_cast<unsigned>(a.bus), static_cast<unsigned>(a.dev), static_cast<unsigned>(a.func));
    PciDevice dev;
    dev.bus_id = bus;
    dev.vendor_id = a.vendor_id;
    dev.device_id = a.device_id;
    dev.class_id = a.class_id;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj);
    if (anc != nullptr && anc->nodeset != nullptr && hwloc_bitmap_weight(anc->nodeset) == 1) {
      dev.numa_node = hwloc_bitmap_first(anc->nodeset);
    }
    host.pci_devices.push_back(std::move(dev));
  }
  hwloc_topology_destroy(topo);
  return true;
}

}  // namespace

std::string CanonicalPciBusId(std::string_view bus_id) {
  std::string_view s = Trim(bus_id);
  // [domain:]bus:dev.func
  size_t dot = s.rfind('.');
  if (dot == std::string_view::npos) return std::string(bus_id);
  size_t c2 = s.rfind(':', dot);
  if (c2 == std::string_view::npos) return std::string(bus_id);
  size_t c1 = c2 == 0 ? std::string_view::npos : s.rfind(':', c2 - 1);
  std::string_view domain = c1 == std::string_view::npos ? "0" : s.substr(0, c1);
  std::string_view bus = c1 == std::string_view::npos ? s.substr(0, c2) : s.substr(c1 + 1, c2 - c1 - 1);
  std::string_view dev = s.substr(c2 + 1, dot - c2 - 1);
  std::string_view fn = s.substr(dot + 1);
  if (!IsHex(domain) || !IsHex(bus) || !IsHex(dev) || !IsHex(fn)) return std::string(bus_id);
  unsigned d = 0, b = 0, v = 0, f = 0;
  std::from_chars(domain.data(), domain.data() + domain.size(), d, 16);
  std::from_chars(bus.data(), bus.data() + bus.size(), b, 16);
  std::from_chars(dev.data(), dev.data() + dev.size(), v, 16);
  std::from_chars(fn.data(), fn.data() + fn.size(), f, 16);
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", d & 0xffff, b, v, f);
  return out;
}

int HostInfo::NumaNodeOfPci(std::string_view bus_id) const {
  std::string want = CanonicalPciBusId(bus_id);
  for (const auto& p : pci_devices) {
    if (p.bus_id == want) return p.numa_node;
  }
  return -1;
}

Result<int64_t> ParseMemInfoTotal(std::string_view meminfo) {
  int line_no = 0;
  size_t start = 0;
  while (start < meminfo.size()) {
    size_t nl = meminfo.find('\n', start);
    std::string_view line = meminfo.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? meminfo.size() : nl + 1;
    ++line_no;
    if (line.substr(0, 9) != "MemTotal:") continue;
    std::string_view rest = Trim(line.substr(9));
    int64_t value = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    std::string_view unit = Trim(rest.substr(static_cast<size_t>(p - rest.data())));
    if (ec != std::errc() || value < 0 || (unit != "kB" && !unit.empty())) {
      return InvalidArgument("/proc/meminfo line " + std::to_string(line_no) + ": malformed MemTotal '" +
                             std::string(line) + "'");
    }
    return unit == "kB" ? value * 1024 : value;
  }
  return InvalidArgument("/proc/meminfo: no MemTotal line");
}

int CountCpuInfoProcessors(std::string_view cpuinfo) {
  int n = 0;
  size_t start = 0;
  while (start < cpuinfo.size()) {
    size_t nl = cpuinfo.find('\n', start);
    std::string_view line = cpuinfo.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? cpuinfo.size() : nl + 1;
    if (line.substr(0, 9) == "processor") {
      std::string_view rest = Trim(line.substr(9));
      if (!rest.empty() && rest.front() == ':') ++n;
    }
  }
  return n;
}

int CountInfinibandHcas(const std::string& class_dir) {
  std::error_code ec;
  int n = 0;
  for (std::filesystem::directory_iterator it(class_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().front() != '.') ++n;
  }
  return n;
}

Result<HostInfo> ProcfsHwlocHostSource::Read() {
  HostInfo host;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) host.hostname = name;
  ABACUS_ASSIGN_OR_RETURN(std::string meminfo, ReadFileToString(proc_root_ + "/meminfo"));
  ABACUS_ASSIGN_OR_RETURN(host.memory_bytes, ParseMemInfoTotal(meminfo));
  if (!ReadHwloc(host)) {
    ABACUS_LOG_WARN("hwloc could not load the topology; NUMA and PCI affinity unknown");
  }
  if (host.cpu_milli == 0) {
    auto cpuinfo = ReadFileToString(proc_root_ + "/cpuinfo");
    int n = cpuinfo.ok() ? CountCpuInfoProcessors(*cpuinfo) : 0;
    if (n == 0) {
      long online = ::sysconf(_SC_NPROCESSORS_ONLN);
      n = online > 0 ? static_cast<int>(online) : 1;
    }
    host.cpu_milli = int64_t{n} * 1000;
  }
  if (host.numa_nodes.empty()) {
    host.numa_nodes.push_back({0, host.memory_bytes, static_cast<int>(host.cpu_milli / 1000)});
  }
  if (int hcas = CountInfinibandHcas(infiniband_dir_); hcas > 0) host.extended["rdma/hca"] = hcas;
  return host;
}

}  // namespace abacus::agent
