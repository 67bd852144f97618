// A stand-in libnvidia-ml.so for tests of the dlopen path (agent/discover/nvml.h, nvml_health.h):
// it exports the NVML C entry points Abacus looks up, with nvml.h's signatures and structure
// layouts, over four fake GPUs. Built twice: as is, and with FAKE_NVML_NO_EVENTS (an old driver
// without the event API and the retired-pages query).
//   FAKE_NVML_EVENTS="1:8:79,2:8:13,3:2:0"  events GPU:TYPE:DATA, delivered once each, in order
//   FAKE_NVML_RETIRED="2"                     GPUs with retired pages pending
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Gpu {
  int index;
};
Gpu gpus[4] = {{0}, {1}, {2}, {3}};

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
    if (std::sscanf(item.c_str(), "%d:%llu:%llu", &e.gpu, &e.type, &e.data) == 3 && e.gpu >= 0 && e.gpu < 4) {
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
  *count = 4;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index >= 4) return 2;
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

#ifndef FAKE_NVML_NO_EVENTS
int nvmlEventSetCreate(void** set) {
  Load();
  *set = &queued;
  return 0;
}
int nvmlDeviceRegisterEvents(void*, unsigned long long types, void*) { return types == 0 ? 2 : 0; }
int nvmlEventSetWait_v2(void*, EventData* data, unsigned) {
  if (queued.empty()) return 10;  // NVML_ERROR_TIMEOUT
  Event e = queued.front();
  queued.erase(queued.begin());
  std::memset(data, 0, sizeof *data);
  data->device = &gpus[e.gpu];
  data->eventType = e.type;
  data->eventData = e.data;
  return 0;
}
int nvmlEventSetFree(void*) { return 0; }
int nvmlDeviceGetRetiredPagesPendingStatus(void* device, int* pending) {
  const char* spec = std::getenv("FAKE_NVML_RETIRED");
  std::string want = std::to_string(static_cast<Gpu*>(device)->index);
  *pending = spec != nullptr && std::string(spec).find(want) != std::string::npos ? 1 : 0;
  return 0;
}
#endif

}  // extern "C"
