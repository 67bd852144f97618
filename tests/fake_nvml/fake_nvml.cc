// A stand-in libnvidia-ml.so for tests of the dlopen path (agent/discover/nvml.h, nvml_health.h,
// and a real `abacus agent --nvml-library` in tests/integration/nvml_health_test.cc): it exports
// the NVML C entry points Abacus looks up, with nvml.h's signatures and structure layouts, over
// fake "NVIDIA H100 80GB HBM3" GPUs with UUIDs GPU-fake-INDEX, GPU INDEX busy 25 × (INDEX + 1) %. Built twice: as is, and with
// FAKE_NVML_NO_EVENTS (an old driver without the event API and the retired-pages query).
//   FAKE_NVML_GPUS="2"                        how many GPUs (1–8; default 4)
//   FAKE_NVML_EVENTS="1:8:79,2:8:13,3:2:0"  events GPU:TYPE:DATA, delivered once each, in order
//   FAKE_NVML_RETIRED="2"                     GPUs with retired pages pending
//   FAKE_NVML_FILE=PATH                       faults at run time, PATH read at every
//                                             nvmlEventSetWait and retired-pages query; a line is
//       xid GPU N      an XID event (nvmlEventTypeXidCriticalError, eventData N)
//       dbe GPU        a double-bit ECC event (nvmlEventTypeDoubleBitEccError)
//       retired GPU    retired pages pending on GPU while the line is there
//     Event lines are delivered once each in file order, after FAKE_NVML_EVENTS: append a line to
//     deliver one more.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kMaxGpus = 8;
constexpr unsigned long long kEventXid = 0x8;  // nvmlEventTypeXidCriticalError
constexpr unsigned long long kEventDbe = 0x2;  // nvmlEventTypeDoubleBitEccError

struct Gpu {
  int index;
};
Gpu gpus[kMaxGpus] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};

int GpuCount() {
  const char* n = std::getenv("FAKE_NVML_GPUS");
  int count = n != nullptr ? std::atoi(n) : 4;
  return count >= 1 && count <= kMaxGpus ? count : 4;
}

struct EventData {
  void* device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};

struct Event {
  int gpu;
  unsigned long long type, data;
};
std::vector<Event> queued;
bool loaded = false;
[[maybe_unused]] size_t file_events_delivered = 0;  // event lines of FAKE_NVML_FILE already delivered

// The lines of FAKE_NVML_FILE: its events in order, and the GPUs with retired pages pending.
struct FileFaults {
  std::vector<Event> events;
  std::vector<int> retired;
};

[[maybe_unused]] FileFaults ReadFaultFile() {
  FileFaults out;
  const char* path = std::getenv("FAKE_NVML_FILE");
  if (path == nullptr) return out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string what;
    Event e{};
    if (!(words >> what >> e.gpu) || e.gpu < 0 || e.gpu >= GpuCount()) continue;
    if (what == "xid" && (words >> e.data)) {
      e.type = kEventXid;
      out.events.push_back(e);
    } else if (what == "dbe") {
      e.type = kEventDbe;
      out.events.push_back(e);
    } else if (what == "retired") {
      out.retired.push_back(e.gpu);
    }
  }
  return out;
}

[[maybe_unused]] void Load() {
  if (loaded) return;
  loaded = true;
  const char* spec = std::getenv("FAKE_NVML_EVENTS");
  if (spec == nullptr) return;
  std::string s(spec);
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    std::string item = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    Event e{};
    if (std::sscanf(item.c_str(), "%d:%llu:%llu", &e.gpu, &e.type, &e.data) == 3 && e.gpu >= 0 && e.gpu < GpuCount()) {
      queued.push_back(e);
    }
    if (end == std::string::npos) break;
    pos = end + 1;
  }
}

void Copy(const std::string& s, char* out, unsigned n) {
  std::strncpy(out, s.c_str(), n);
  if (n > 0) out[n - 1] = '\0';
}

}  // namespace

extern "C" {

int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }
const char* nvmlErrorString(int) { return "fake NVML error"; }
int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(GpuCount());
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index >= static_cast<unsigned>(GpuCount())) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = &gpus[index];
  return 0;
}
int nvmlDeviceGetName(void*, char* name, unsigned n) {
  Copy("NVIDIA H100 80GB HBM3", name, n);
  return 0;
}
int nvmlDeviceGetUUID(void* device, char* uuid, unsigned n) {
  Copy("GPU-fake-" + std::to_string(static_cast<Gpu*>(device)->index), uuid, n);
  return 0;
}
int nvmlDeviceGetMemoryInfo(void*, unsigned long long* memory) {
  memory[0] = 80ULL << 30;  // total, free, used
  memory[1] = 80ULL << 30;
  memory[2] = 0;
  return 0;
}

int nvmlDeviceGetUtilizationRates(void* device, unsigned* rates) {
  rates[0] = 25u * static_cast<unsigned>(static_cast<Gpu*>(device)->index + 1);  // gpu %, memory %
  rates[1] = 0;
  return 0;
}

#ifndef FAKE_NVML_NO_EVENTS
int nvmlEventSetCreate(void** set) {
  Load();
  *set = &queued;
  return 0;
}
int nvmlDeviceRegisterEvents(void*, unsigned long long types, void*) { return types == 0 ? 2 : 0; }
int nvmlEventSetWait_v2(void*, EventData* data, unsigned) {
  Event e{};
  if (!queued.empty()) {
    e = queued.front();
    queued.erase(queued.begin());
  } else {
    FileFaults file = ReadFaultFile();
    if (file_events_delivered >= file.events.size()) return 10;  // NVML_ERROR_TIMEOUT
    e = file.events[file_events_delivered++];
  }
  std::memset(data, 0, sizeof *data);
  data->device = &gpus[e.gpu];
  data->eventType = e.type;
  data->eventData = e.data;
  return 0;
}
int nvmlEventSetFree(void*) { return 0; }
int nvmlDeviceGetRetiredPagesPendingStatus(void* device, int* pending) {
  const int index = static_cast<Gpu*>(device)->index;
  const char* spec = std::getenv("FAKE_NVML_RETIRED");
  *pending = spec != nullptr && std::string(spec).find(std::to_string(index)) != std::string::npos ? 1 : 0;
  for (int gpu : ReadFaultFile().retired) *pending |= gpu == index ? 1 : 0;
  return 0;
}
#endif

}  // extern "C"
